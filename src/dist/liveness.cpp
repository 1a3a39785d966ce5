#include "dist/liveness.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "base/error.h"

namespace oar::dist {
namespace {

void write_all(int fd, const std::string& s) {
  size_t done = 0;
  while (done < s.size()) {
    ssize_t n = ::send(fd, s.data() + done, s.size() - done, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // the peer is gone; its end-of-file reports it
    done += size_t(n);
  }
}

// Reads whole lines from a connection; false on end-of-file or error.
bool read_lines(int fd, std::string& buf, std::vector<std::string>& lines) {
  char tmp[256];
  ssize_t n = ::recv(fd, tmp, sizeof tmp, 0);
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return true;
  if (n <= 0) return false;
  buf.append(tmp, size_t(n));
  size_t pos;
  while ((pos = buf.find('\n')) != std::string::npos) {
    lines.push_back(buf.substr(0, pos));
    buf.erase(0, pos + 1);
  }
  return true;
}

std::vector<std::string> local_ipv4() {
  std::vector<std::string> out, loop;
  ifaddrs* ifs = nullptr;
  if (getifaddrs(&ifs) == 0) {
    for (ifaddrs* i = ifs; i; i = i->ifa_next) {
      if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET) continue;
      char s[INET_ADDRSTRLEN];
      inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(i->ifa_addr)->sin_addr, s, sizeof s);
      (std::strncmp(s, "127.", 4) == 0 ? loop : out).push_back(s);
    }
    freeifaddrs(ifs);
  }
  out.insert(out.end(), loop.begin(), loop.end());
  if (out.empty()) out.push_back("127.0.0.1");
  return out;
}

// Connects with a deadline; -1 on failure.
int try_connect(const std::string& ip, int port, int timeout_ms) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(uint16_t(port));
  if (inet_pton(AF_INET, ip.c_str(), &a.sin_addr) != 1) { ::close(fd); return -1; }
  int flags = fcntl(fd, F_GETFL, 0);
  fcntl(fd, F_SETFL, flags | O_NONBLOCK);
  int rc = ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  if (rc < 0 && errno == EINPROGRESS) {
    pollfd p{fd, POLLOUT, 0};
    int err = 0;
    socklen_t len = sizeof err;
    if (::poll(&p, 1, timeout_ms) == 1 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err == 0)
      rc = 0;
  }
  if (rc != 0) { ::close(fd); return -1; }
  fcntl(fd, F_SETFL, flags);
  return fd;
}

}  // namespace

Liveness::~Liveness() { shutdown(); }

PeerState Liveness::state(int rank) const {
  if (!states_ || rank < 0 || rank >= size_) return PeerState::Alive;
  return PeerState(states_[rank].load(std::memory_order_relaxed));
}

void Liveness::set_state(int rank, PeerState s) {
  if (rank < 0 || rank >= size_) return;
  uint8_t expected = uint8_t(PeerState::Alive);
  states_[rank].compare_exchange_strong(expected, uint8_t(s));
}

std::string Liveness::listen(int size) {
  rank_ = 0;
  size_ = size;
  states_.reset(new std::atomic<uint8_t>[size_t(size)]());
  listen_fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
  OAR_CHECK(listen_fd_ >= 0, Runtime, "[oar.distributed.init_parallel_env] cannot open a socket: ",
            std::strerror(errno));
  int one = 1;
  setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_ANY);
  socklen_t len = sizeof a;
  OAR_CHECK(::bind(listen_fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
                ::listen(listen_fd_, 1024) == 0 &&
                getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&a), &len) == 0,
            Runtime, "[oar.distributed.init_parallel_env] cannot listen on a TCP port: ", std::strerror(errno));
  OAR_CHECK(::pipe(wake_) == 0, Runtime, "[oar.distributed.init_parallel_env] pipe failed");
  std::string addr;
  for (const std::string& ip : local_ipv4()) addr += (addr.empty() ? "" : ",") + ip;
  addr += ":" + std::to_string(ntohs(a.sin_port));
  thread_ = std::thread([this] { serve(); });
  return addr;
}

void Liveness::connect(const std::string& address, int rank, int size) {
  rank_ = rank;
  size_ = size;
  states_.reset(new std::atomic<uint8_t>[size_t(size)]());
  size_t colon = address.rfind(':');
  OAR_CHECK(colon != std::string::npos, Runtime, "[oar.distributed.init_parallel_env] bad monitor address ",
            address);
  int port = std::stoi(address.substr(colon + 1));
  std::string ips = address.substr(0, colon);
  // Rank 0 may not accept yet, and some of its addresses may be unreachable
  // from this host: try each, for up to 30 seconds in all.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (conn_fd_ < 0 && std::chrono::steady_clock::now() < deadline) {
    size_t start = 0;
    while (conn_fd_ < 0 && start <= ips.size()) {
      size_t comma = ips.find(',', start);
      std::string ip = ips.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      conn_fd_ = try_connect(ip, port, 500);
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
    if (conn_fd_ < 0) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  OAR_CHECK(conn_fd_ >= 0, Runtime, "[oar.distributed.init_parallel_env] rank ", rank,
            " cannot reach rank 0's monitor at ", address);
  int one = 1;
  setsockopt(conn_fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  write_all(conn_fd_, "H " + std::to_string(rank) + "\n");
  OAR_CHECK(::pipe(wake_) == 0, Runtime, "[oar.distributed.init_parallel_env] pipe failed");
  thread_ = std::thread([this] { follow(); });
}

void Liveness::serve() {
  struct Conn { int fd; int rank; std::string buf; bool said_bye; };
  std::vector<Conn> conns;
  auto tell_others = [&](char what, int r) {
    std::string msg = std::string(1, what) + " " + std::to_string(r) + "\n";
    for (Conn& c : conns)
      if (c.fd >= 0 && c.rank != r) write_all(c.fd, msg);
  };
  while (true) {
    std::vector<pollfd> fds{{wake_[0], POLLIN, 0}, {listen_fd_, POLLIN, 0}};
    for (Conn& c : conns) fds.push_back({c.fd, POLLIN, 0});
    if (::poll(fds.data(), fds.size(), -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (fds[0].revents) {  // shutting down: rank 0 has finished
      tell_others('F', 0);
      for (Conn& c : conns) ::close(c.fd);
      return;
    }
    // Only the connections that were polled have an entry in fds: one
    // accepted below is read from the next round on.
    const size_t polled = conns.size();
    if (fds[1].revents & POLLIN) {
      int fd = ::accept(listen_fd_, nullptr, nullptr);
      if (fd >= 0) conns.push_back({fd, -1, {}, false});
    }
    for (size_t i = 0; i < polled; ++i) {
      Conn& c = conns[i];
      if (!(fds[i + 2].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      std::vector<std::string> lines;
      bool open = read_lines(c.fd, c.buf, lines);
      for (const std::string& l : lines) {
        if (l.size() > 2 && l[0] == 'H') {
          c.rank = std::atoi(l.c_str() + 2);
          // A peer that connects after another died or finished learns it now.
          for (int r = 0; r < size_; ++r)
            if (state(r) != PeerState::Alive)
              write_all(c.fd, std::string(state(r) == PeerState::Died ? "D " : "F ") + std::to_string(r) + "\n");
        } else if (l == "B") {
          c.said_bye = true;
        }
      }
      if (!open) {
        ::close(c.fd);
        c.fd = -1;
        if (c.rank >= 0) {
          PeerState s = c.said_bye ? PeerState::Finished : PeerState::Died;
          set_state(c.rank, s);
          tell_others(s == PeerState::Died ? 'D' : 'F', c.rank);
        }
      }
    }
    std::erase_if(conns, [](const Conn& c) { return c.fd < 0; });
  }
}

void Liveness::follow() {
  std::string buf;
  bool bye0 = false;
  while (true) {
    pollfd fds[2] = {{wake_[0], POLLIN, 0}, {conn_fd_, POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (fds[0].revents) return;
    std::vector<std::string> lines;
    bool open = read_lines(conn_fd_, buf, lines);
    for (const std::string& l : lines) {
      if (l.size() < 3) continue;
      int r = std::atoi(l.c_str() + 2);
      if (l[0] == 'D') set_state(r, PeerState::Died);
      if (l[0] == 'F') {
        set_state(r, PeerState::Finished);
        if (r == 0) bye0 = true;
      }
    }
    if (!open) {
      set_state(0, bye0 ? PeerState::Finished : PeerState::Died);
      return;
    }
  }
}

void Liveness::shutdown() {
  if (!thread_.joinable()) return;
  if (rank_ != 0 && conn_fd_ >= 0) write_all(conn_fd_, "B\n");
  if (wake_[1] >= 0) {
    ssize_t n = ::write(wake_[1], "x", 1);
    (void)n;
  }
  thread_.join();
  for (int* fd : {&conn_fd_, &listen_fd_, &wake_[0], &wake_[1]})
    if (*fd >= 0) { ::close(*fd); *fd = -1; }
}

}  // namespace oar::dist
