// A loopback HTTP server for tests (header-only, test code only) that accepts every connection,
// reads the request and then answers nothing, ever: the stalled transfer of a server that hangs.
// Connections stay open until the server is destroyed. Thread-safe.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace stoker::storage::testing {

class StallingHttpServer {
 public:
  StallingHttpServer() {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    socklen_t len = sizeof(addr);
    if (listen_fd_ < 0 || ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), len) != 0 ||
        ::listen(listen_fd_, 16) != 0 ||
        ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      return;  // port() stays 0: the test fails on it
    }
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { Serve(); });
  }
  ~StallingHttpServer() {
    stop_.store(true);
    if (thread_.joinable()) thread_.join();
    for (const Connection& c : connections_) ::close(c.fd);
    if (listen_fd_ >= 0) ::close(listen_fd_);
  }
  StallingHttpServer(const StallingHttpServer&) = delete;
  StallingHttpServer& operator=(const StallingHttpServer&) = delete;

  int port() const { return port_; }
  std::string url(const std::string& path) const {
    return "http://127.0.0.1:" + std::to_string(port_) + path;
  }
  // Blocks until `n` requests have arrived (and been left unanswered), or `timeout` passed.
  bool WaitForRequests(int n, std::chrono::seconds timeout = std::chrono::seconds(30)) {
    std::unique_lock<std::mutex> l(mu_);
    return cv_.wait_for(l, timeout, [&] { return requests_ >= n; });
  }
  int requests() const {
    std::lock_guard<std::mutex> l(mu_);
    return requests_;
  }

 private:
  void Serve() {
    std::vector<pollfd> fds;
    while (!stop_.load()) {
      fds.assign(1, pollfd{listen_fd_, POLLIN, 0});
      for (const Connection& c : connections_) fds.push_back(pollfd{c.fd, POLLIN, 0});
      if (::poll(fds.data(), fds.size(), 20) <= 0) continue;
      for (size_t i = 1; i < fds.size(); ++i) {
        if (fds[i].revents == 0) continue;
        Connection& c = connections_[i - 1];
        char buffer[4096];
        const ssize_t n = ::recv(c.fd, buffer, sizeof(buffer), 0);
        if (n <= 0) {  // the client gave up: forget the connection
          ::close(c.fd);
          c.fd = -1;
          continue;
        }
        c.head.append(buffer, static_cast<size_t>(n));
        for (size_t at; (at = c.head.find("\r\n\r\n")) != std::string::npos;) {
          c.head.erase(0, at + 4);
          std::lock_guard<std::mutex> l(mu_);
          ++requests_;
          cv_.notify_all();
        }
      }
      std::erase_if(connections_, [](const Connection& c) { return c.fd < 0; });
      if ((fds[0].revents & POLLIN) != 0) {
        const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
        if (fd >= 0) connections_.push_back({fd, ""});
      }
    }
  }

  struct Connection {
    int fd;
    std::string head;  // the request bytes read and not yet counted
  };

  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  mutable std::mutex mu_;
  std::condition_variable cv_;
  int requests_ = 0;                     // guarded by mu_
  std::vector<Connection> connections_;  // the server thread's until it is joined
  std::thread thread_;
};

}  // namespace stoker::storage::testing
