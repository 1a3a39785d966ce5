// custom_cpu streams and events. A stream is a queue of tasks served by a
// thread of its own, in order; an event is a task that, when the stream
// reaches it, marks the event complete and takes the time. So a query can
// really answer "not yet", and synchronizing really waits.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "custom_cpu.h"

namespace custom_cpu {
namespace {

// Test hook: each task waits this long first (custom_cpu_set_task_delay_us),
// so that tests can see queued work pending.
std::atomic<int> g_task_delay_us{0};

class Stream {
 public:
  explicit Stream(int device) : device_(device), worker_([this] { run(); }) {}
  ~Stream() {
    {
      std::lock_guard<std::mutex> g(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    worker_.join();  // runs what is queued first
  }

  int device() const { return device_; }

  void enqueue(std::function<void()> task) {
    {
      std::lock_guard<std::mutex> g(mu_);
      q_.push_back(std::move(task));
    }
    cv_.notify_all();
  }
  bool idle() {
    std::lock_guard<std::mutex> g(mu_);
    return q_.empty() && !busy_;
  }
  void synchronize() {
    std::unique_lock<std::mutex> g(mu_);
    done_cv_.wait(g, [this] { return q_.empty() && !busy_; });
  }

 private:
  void run() {
    std::unique_lock<std::mutex> g(mu_);
    for (;;) {
      cv_.wait(g, [this] { return stop_ || !q_.empty(); });
      if (q_.empty()) return;  // stopping, nothing left
      std::function<void()> task = std::move(q_.front());
      q_.pop_front();
      busy_ = true;
      g.unlock();
      if (int us = g_task_delay_us.load()) std::this_thread::sleep_for(std::chrono::microseconds(us));
      task();
      g.lock();
      busy_ = false;
      if (q_.empty()) done_cv_.notify_all();
    }
  }

  int device_;
  std::mutex mu_;
  std::condition_variable cv_, done_cv_;
  std::deque<std::function<void()>> q_;
  bool busy_ = false, stop_ = false;
  std::thread worker_;  // last: started once the rest is constructed
};

struct Event {
  std::mutex mu;
  std::condition_variable cv;
  uint64_t recorded = 0, completed = 0;  // record number queued / reached
  int64_t ns = 0;                        // when the last reached record ran
  bool done() const { return completed >= recorded; }
  // The number of the last record queued; with `next`, of a new one.
  uint64_t last_record(bool next) {
    std::lock_guard<std::mutex> g(mu);
    return next ? ++recorded : recorded;
  }
};
// What an OAR_Event points to. Queued tasks hold the Event itself, so it may
// be destroyed while they are pending (as a CUDA event may).
struct EventHandle {
  std::shared_ptr<Event> ev = std::make_shared<Event>();
};
std::shared_ptr<Event> event_of(OAR_Event e) { return reinterpret_cast<EventHandle*>(e)->ev; }

struct DeviceStreams {
  std::unique_ptr<Stream> default_stream;
  std::set<Stream*> created;
};

std::mutex g_mu;  // guards g_devices
std::vector<DeviceStreams> g_devices;
std::atomic<int> g_count{0};

Stream* stream_of(int device, OAR_Stream s) {
  if (s) return reinterpret_cast<Stream*>(s);
  std::lock_guard<std::mutex> g(g_mu);
  return g_devices[size_t(device)].default_stream.get();
}

OAR_Status bad_device(int device) {
  return set_error(OAR_ERROR_INVALID_ARGUMENT, "custom_cpu:" + std::to_string(device) + " does not exist");
}

// ---- Table entries ----------------------------------------------------------

OAR_Status create_stream(int device, OAR_Stream* out) {
  if (!valid_device(device)) return bad_device(device);
  auto* s = new Stream(device);
  {
    std::lock_guard<std::mutex> g(g_mu);
    g_devices[size_t(device)].created.insert(s);
  }
  *out = reinterpret_cast<OAR_Stream>(s);
  return OAR_SUCCESS;
}

OAR_Status destroy_stream(int device, OAR_Stream stream) {
  auto* s = reinterpret_cast<Stream*>(stream);
  {
    std::lock_guard<std::mutex> g(g_mu);
    if (!valid_device(device) || !g_devices[size_t(device)].created.erase(s))
      return set_error(OAR_ERROR_INVALID_ARGUMENT, "not a stream of custom_cpu:" + std::to_string(device));
  }
  delete s;  // finishes its queued work
  return OAR_SUCCESS;
}

OAR_Status query_stream(int device, OAR_Stream s) {
  if (!valid_device(device)) return bad_device(device);
  return stream_of(device, s)->idle() ? OAR_SUCCESS : OAR_NOT_READY;
}

OAR_Status synchronize_stream_entry(int device, OAR_Stream s) {
  if (!valid_device(device)) return bad_device(device);
  stream_of(device, s)->synchronize();
  return OAR_SUCCESS;
}

OAR_Status stream_add_callback(int device, OAR_Stream s, OAR_StreamCallback cb, void* user) {
  if (!valid_device(device)) return bad_device(device);
  stream_of(device, s)->enqueue([cb, user] { cb(user, OAR_SUCCESS); });
  return OAR_SUCCESS;
}

OAR_Status create_event(int device, OAR_Event* out) {
  if (!valid_device(device)) return bad_device(device);
  *out = reinterpret_cast<OAR_Event>(new EventHandle);
  return OAR_SUCCESS;
}

OAR_Status destroy_event(int, OAR_Event e) {
  delete reinterpret_cast<EventHandle*>(e);
  return OAR_SUCCESS;
}

OAR_Status record_event(int device, OAR_Stream s, OAR_Event event) {
  if (!valid_device(device)) return bad_device(device);
  std::shared_ptr<Event> e = event_of(event);
  const uint64_t n = e->last_record(true);
  stream_of(device, s)->enqueue([e, n] {
    std::lock_guard<std::mutex> g(e->mu);
    if (n > e->completed) {
      e->completed = n;
      e->ns = now_ns();
    }
    e->cv.notify_all();
  });
  return OAR_SUCCESS;
}

OAR_Status query_event(int, OAR_Event event) {
  std::shared_ptr<Event> e = event_of(event);
  std::lock_guard<std::mutex> g(e->mu);
  return e->done() ? OAR_SUCCESS : OAR_NOT_READY;
}

OAR_Status synchronize_event(int, OAR_Event event) {
  std::shared_ptr<Event> e = event_of(event);
  std::unique_lock<std::mutex> g(e->mu);
  e->cv.wait(g, [e] { return e->done(); });
  return OAR_SUCCESS;
}

OAR_Status stream_wait_event(int device, OAR_Stream s, OAR_Event event) {
  if (!valid_device(device)) return bad_device(device);
  std::shared_ptr<Event> e = event_of(event);
  const uint64_t n = e->last_record(false);  // the record to wait for: the latest one queued now
  stream_of(device, s)->enqueue([e, n] {
    std::unique_lock<std::mutex> g(e->mu);
    e->cv.wait(g, [e, n] { return e->completed >= n; });
  });
  return OAR_SUCCESS;
}

OAR_Status event_elapsed_time(int, OAR_Event start, OAR_Event end, float* ms) {
  std::shared_ptr<Event> a = event_of(start), b = event_of(end);
  int64_t ta, tb;
  {
    std::lock_guard<std::mutex> g(a->mu);
    if (!a->done() || a->recorded == 0) return set_error(OAR_NOT_READY, "the start event has not completed");
    ta = a->ns;
  }
  {
    std::lock_guard<std::mutex> g(b->mu);
    if (!b->done() || b->recorded == 0) return set_error(OAR_NOT_READY, "the end event has not completed");
    tb = b->ns;
  }
  *ms = float(double(tb - ta) / 1e6);
  return OAR_SUCCESS;
}

}  // namespace

void enqueue(int device, OAR_Stream s, std::function<void()> task) { stream_of(device, s)->enqueue(std::move(task)); }

void synchronize_stream(int device, OAR_Stream s) { stream_of(device, s)->synchronize(); }

void synchronize_device(int device) {
  std::vector<Stream*> all;
  {
    std::lock_guard<std::mutex> g(g_mu);
    DeviceStreams& d = g_devices[size_t(device)];
    all.push_back(d.default_stream.get());
    all.insert(all.end(), d.created.begin(), d.created.end());
  }
  for (Stream* s : all) s->synchronize();
}

int device_count() { return g_count.load(); }
bool valid_device(int device) { return device >= 0 && device < g_count.load(); }

void start_streams(int count) {
  std::lock_guard<std::mutex> g(g_mu);
  g_devices.clear();
  g_devices.resize(size_t(count));
  for (int i = 0; i < count; ++i) g_devices[size_t(i)].default_stream = std::make_unique<Stream>(i);
  g_count.store(count);
}

void stop_streams() {
  std::vector<DeviceStreams> devices;
  {
    std::lock_guard<std::mutex> g(g_mu);
    devices.swap(g_devices);
    g_count.store(0);
  }
  for (DeviceStreams& d : devices)
    for (Stream* s : d.created) delete s;
  // (the default streams join in their destructors)
}

void fill_stream_entries(OAR_DeviceInterface& t) {
  t.create_stream = create_stream;
  t.destroy_stream = destroy_stream;
  t.query_stream = query_stream;
  t.synchronize_stream = synchronize_stream_entry;
  t.stream_wait_event = stream_wait_event;
  t.stream_add_callback = stream_add_callback;
  t.create_event = create_event;
  t.record_event = record_event;
  t.query_event = query_event;
  t.synchronize_event = synchronize_event;
  t.destroy_event = destroy_event;
  t.event_elapsed_time = event_elapsed_time;
}

}  // namespace custom_cpu

// Test hook (read through ctypes): each stream task first sleeps this long.
extern "C" __attribute__((visibility("default"))) void custom_cpu_set_task_delay_us(int us) {
  custom_cpu::g_task_delay_us.store(us < 0 ? 0 : us);
}
