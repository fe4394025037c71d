// The interpreter's thread pool and the host extension kiln.parallel_for/1
// (kiln/kiln_capabilities.h) that lends it to plugins. Internal to libkiln.
//
// One pool per interpreter (InterpreterOptions::num_threads threads,
// counting the caller): a per-interpreter pool keeps the thread count an
// interpreter option, ties the threads' lifetime to the interpreter, and
// keeps interpreters of one process from waiting on each other. Worker
// threads start on the first ParallelFor that can use them and are joined
// by the destructor. A worker that finished a job spins for up to
// kWorkerSpinMicros before it sleeps on a condition variable: the nodes of
// one Invoke call ParallelFor microseconds apart, and a sleeping worker
// takes tens of microseconds to wake, longer than many of those tasks. For
// the same reason the caller spins (as long) for the workers that joined
// its job before it sleeps on done_cv_.
#ifndef KILN_HOST_RUNTIME_THREAD_POOL_H_
#define KILN_HOST_RUNTIME_THREAD_POOL_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include "kiln/kiln_capabilities.h"

namespace kiln {

class ThreadPool {
 public:
  // num_threads < 1 counts as 1 (no worker threads, ever).
  explicit ThreadPool(int32_t num_threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int32_t num_threads() const { return num_threads_; }

  // kiln.parallel_for/1's parallel_for (see kiln_capabilities.h for the
  // contract). Safe to call from any thread; calls from different threads
  // take turns; a call from inside a task of this pool runs inline.
  KilnStatus ParallelFor(int64_t count, int64_t min_range,
                         KilnParallelForTask task, void* task_data);

  // Worker threads started so far (0 until a ParallelFor needed them).
  int32_t started_threads() const;

 private:
  struct Job {
    KilnParallelForTask task = nullptr;
    void* data = nullptr;
    int64_t count = 0;
    int64_t range = 1;
    int64_t num_ranges = 0;
    std::atomic<int64_t> next{0};
    std::atomic<int32_t> status{KILN_STATUS_OK};
  };

  void StartWorkers();  // under call_mu_
  void WorkerLoop(int32_t thread_index);
  // Returns once no worker runs ranges of the (closed) current job: spins
  // for kWorkerSpinMicros, then sleeps on done_cv_.
  void WaitForBusyWorkers();
  // Runs ranges of the current job until none is left.
  void RunRanges(Job& job, int32_t thread_index);

  const int32_t num_threads_;
  std::mutex call_mu_;     // one ParallelFor at a time
  mutable std::mutex mu_;  // guards workers_; sleeping and waking
  std::condition_variable work_cv_;
  std::condition_variable done_cv_;
  // The open job (null once the caller closed it) and the count of jobs
  // posted, which spinning workers watch.
  std::atomic<Job*> job_{nullptr};
  std::atomic<uint64_t> generation_{0};
  std::atomic<int32_t> busy_workers_{0};      // counted in before joining
  std::atomic<int32_t> sleeping_workers_{0};  // about to wait on work_cv_
  std::atomic<bool> caller_waiting_{false};   // the caller sleeps on done_cv_
  std::atomic<bool> stop_{false};
  std::vector<std::thread> workers_;
};

// The extension's static struct (registered in host_extensions.cc). Its
// functions reach the ThreadPool of the calling callback's CallContext and
// run serially without one.
const KilnParallelForHostExtension* ParallelForHostExtension();

}  // namespace kiln

#endif  // KILN_HOST_RUNTIME_THREAD_POOL_H_
