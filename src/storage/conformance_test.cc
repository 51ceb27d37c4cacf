// The conformance suite: the same tests against every backend. Memory and file always run; S3
// runs when STOKER_TEST_S3_PREFIX names a writable prefix (s3://bucket/some/prefix/), which
// tests/python/test_storage_s3.py sets against a local S3 server it starts.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "common/temp_dir.h"
#include "storage/file_backend.h"
#include "storage/memory_backend.h"
#include "storage/open_backend.h"

namespace stoker::storage {
namespace {

std::string Pattern(size_t n, uint32_t seed) {
  std::string s(n, '\0');
  uint32_t x = seed * 2654435761u + 1;
  for (char& c : s) {
    x = x * 1664525u + 1013904223u;
    c = static_cast<char>(x >> 24);
  }
  return s;
}

struct Fixture {
  std::unique_ptr<TempDir> dir;  // for the file backend
  std::unique_ptr<Backend> backend;
  std::string prefix;  // every object of a test is named prefix + name
};

Fixture MakeFixture(const std::string& kind) {
  Fixture f;
  if (kind == "memory") {
    f.backend = NewMemoryBackend();
    f.prefix = "mem://test/";
  } else if (kind == "file") {
    f.dir = std::move(TempDir::Create("storage-conformance-").value());
    f.backend = NewFileBackend();
    f.prefix = f.dir->path() + "/";
  } else {
    const char* prefix = std::getenv("STOKER_TEST_S3_PREFIX");
    Result<std::unique_ptr<Backend>> backend = OpenBackendForUri(prefix);
    EXPECT_TRUE(backend.ok()) << backend.status().ToString();
    if (backend.ok()) f.backend = std::move(*backend);
    f.prefix =
        std::string(prefix) + ::testing::UnitTest::GetInstance()->current_test_info()->name() + "/";
  }
  return f;
}

class ConformanceTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (GetParam() == "s3" && std::getenv("STOKER_TEST_S3_PREFIX") == nullptr) {
      GTEST_SKIP() << "STOKER_TEST_S3_PREFIX not set (tests/python/test_storage_s3.py sets it)";
    }
    f_ = MakeFixture(GetParam());
    ASSERT_NE(f_.backend, nullptr);
  }
  Fixture f_;
};

TEST_P(ConformanceTest, WriteThenReadRoundTripsEverySize) {
  for (size_t n : {size_t{0}, size_t{1}, size_t{4095}, size_t{65536}, size_t{1} << 20}) {
    const std::string name = f_.prefix + "obj-" + std::to_string(n);
    const std::string bytes = Pattern(n, static_cast<uint32_t>(n));
    ASSERT_TRUE(WriteAll(*f_.backend, name, bytes).ok()) << name;
    Result<ObjectInfo> info = f_.backend->Stat(name);
    ASSERT_TRUE(info.ok()) << info.status().ToString();
    EXPECT_EQ(info->size_bytes, n);
    Result<std::string> back = ReadAll(*f_.backend, name);
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    EXPECT_TRUE(*back == bytes) << name;
  }
}

TEST_P(ConformanceTest, ReadAtReturnsTheRangeAndStopsAtTheEnd) {
  const std::string name = f_.prefix + "ranged";
  const std::string bytes = Pattern(10000, 7);
  ASSERT_TRUE(WriteAll(*f_.backend, name, bytes).ok());
  Result<std::unique_ptr<ByteSource>> source = f_.backend->OpenForRead(name);
  ASSERT_TRUE(source.ok()) << source.status().ToString();
  EXPECT_EQ((*source)->size_bytes(), 10000u);
  std::string out(300, '\0');
  Result<size_t> got = (*source)->ReadAt(1234, 300, out.data());
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(*got, 300u);
  EXPECT_EQ(out, bytes.substr(1234, 300));
  got = (*source)->ReadAt(9900, 300, out.data());
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(*got, 100u);
  EXPECT_EQ(out.substr(0, 100), bytes.substr(9900));
  got = (*source)->ReadAt(10000, 5, out.data());
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(*got, 0u);
}

TEST_P(ConformanceTest, MissingObjectIsNotFound) {
  EXPECT_EQ(f_.backend->Stat(f_.prefix + "absent").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(f_.backend->OpenForRead(f_.prefix + "absent").status().code(), StatusCode::kNotFound);
}

TEST_P(ConformanceTest, ListReturnsEveryObjectUnderThePrefixSorted) {
  for (const char* name : {"b/2", "a", "b/1", "c"}) {
    ASSERT_TRUE(WriteAll(*f_.backend, f_.prefix + "list/" + name, name).ok());
  }
  ASSERT_TRUE(WriteAll(*f_.backend, f_.prefix + "listed-not", "x").ok());
  Result<std::vector<ObjectInfo>> all = f_.backend->List(f_.prefix + "list/");
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  ASSERT_EQ(all->size(), 4u);
  EXPECT_EQ((*all)[0].uri, f_.prefix + "list/a");
  EXPECT_EQ((*all)[1].uri, f_.prefix + "list/b/1");
  EXPECT_EQ((*all)[2].uri, f_.prefix + "list/b/2");
  EXPECT_EQ((*all)[3].size_bytes, 1u);
  Result<std::vector<ObjectInfo>> part = f_.backend->List(f_.prefix + "list/b");
  ASSERT_TRUE(part.ok());
  EXPECT_EQ(part->size(), 2u);
  Result<std::vector<ObjectInfo>> none = f_.backend->List(f_.prefix + "nothing-here/");
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

TEST_P(ConformanceTest, NothingIsVisibleBeforeClose) {
  const std::string name = f_.prefix + "pending";
  Result<std::unique_ptr<Writer>> writer = f_.backend->OpenForWrite(name);
  ASSERT_TRUE(writer.ok());
  ASSERT_TRUE((*writer)->Append("half").ok());
  EXPECT_EQ(f_.backend->Stat(name).status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(f_.backend->List(name)->empty());
  writer->reset();  // abandoned: never published
  EXPECT_EQ(f_.backend->Stat(name).status().code(), StatusCode::kNotFound);
}

TEST_P(ConformanceTest, CloseReplacesAnOldObject) {
  const std::string name = f_.prefix + "replaced";
  ASSERT_TRUE(WriteAll(*f_.backend, name, "old contents").ok());
  ASSERT_TRUE(WriteAll(*f_.backend, name, "new").ok());
  EXPECT_EQ(ReadAll(*f_.backend, name).value(), "new");
}

INSTANTIATE_TEST_SUITE_P(Backends, ConformanceTest, ::testing::Values("memory", "file", "s3"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace stoker::storage
