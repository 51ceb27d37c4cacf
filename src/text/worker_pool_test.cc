#include "text/worker_pool.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <set>
#include <thread>
#include <vector>

namespace stoker {
namespace {

TEST(WorkerPoolTest, CopiesRunAtOnceAndThreadsAreKeptAcrossCalls) {
  WorkerPool& pool = WorkerPool::Shared();
  std::mutex mu;
  std::set<std::thread::id> first, second;
  for (std::set<std::thread::id>* seen : {&first, &second}) {
    // Every copy waits for all three to have started: this only ends if they run at once.
    std::atomic<int> started{0};
    WorkerPool::Group g = pool.Start(3, [&] {
      started.fetch_add(1);
      while (started.load() < 3) std::this_thread::yield();
      std::lock_guard<std::mutex> lock(mu);
      seen->insert(std::this_thread::get_id());
    });
    g.Wait();
    EXPECT_EQ(seen->size(), 3u);
  }
  EXPECT_EQ(pool.threads(), 3u);
  EXPECT_EQ(first, second);  // the same threads served both calls
}

TEST(WorkerPoolTest, ConcurrentGroupsFromManyThreads) {
  std::atomic<int> total{0};
  std::vector<std::thread> callers;
  for (int c = 0; c < 4; ++c) {
    callers.emplace_back([&] {
      for (int round = 0; round < 20; ++round) {
        int mine = 0;
        std::mutex mu;
        {
          WorkerPool::Group g = WorkerPool::Shared().Start(2, [&] {
            std::lock_guard<std::mutex> lock(mu);
            ++mine;
          });
        }  // the destructor waits
        EXPECT_EQ(mine, 2);
        total.fetch_add(mine);
      }
    });
  }
  for (auto& t : callers) t.join();
  EXPECT_EQ(total.load(), 4 * 20 * 2);
}

#if defined(__SANITIZE_THREAD__)
constexpr bool kThreadSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
constexpr bool kThreadSanitizer = true;
#else
constexpr bool kThreadSanitizer = false;
#endif
#else
constexpr bool kThreadSanitizer = false;
#endif

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kAddressSanitizer = true;
#else
constexpr bool kAddressSanitizer = false;
#endif

// Runs in the release build's ctest. Not under the sanitizers: TSan starts no threads in a
// multi-threaded fork, and GCC 12's ASan allocator is not fork-safe while another thread is in it
// (the parent's workers may still be finishing their task): a child hung in one CI run of three.
TEST(WorkerPoolTest, WorksInAForkedChild) {
  if (kThreadSanitizer) GTEST_SKIP() << "TSan does not start threads in a multi-threaded fork";
  if (kAddressSanitizer) GTEST_SKIP() << "ASan's allocator is not fork-safe with busy threads";
  std::atomic<int> ran{0};
  WorkerPool::Shared().Start(2, [&] { ran.fetch_add(1); }).Wait();
  ASSERT_EQ(ran.load(), 2);
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    std::atomic<int> child_ran{0};
    WorkerPool::Shared().Start(2, [&] { child_ran.fetch_add(1); }).Wait();
    _exit(child_ran.load() == 2 ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

}  // namespace
}  // namespace stoker
