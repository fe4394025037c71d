#include "runtime/thread_pool.h"

#include <algorithm>
#include <chrono>

#include "runtime/graph.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define KILN_CPU_RELAX() _mm_pause()
#else
#define KILN_CPU_RELAX() std::this_thread::yield()
#endif

namespace kiln {
namespace {

// How long an idle worker spins before it sleeps: about the gap between two
// consecutive nodes' ParallelFor calls in one Invoke.
constexpr int64_t kWorkerSpinMicros = 100;

// The pool whose task the current thread is running (null outside tasks),
// and its thread_index there: what makes a nested ParallelFor run inline.
thread_local const ThreadPool* tls_pool = nullptr;
thread_local int32_t tls_thread_index = 0;

class TaskScope {
 public:
  TaskScope(const ThreadPool* pool, int32_t thread_index)
      : pool_(tls_pool), index_(tls_thread_index) {
    tls_pool = pool;
    tls_thread_index = thread_index;
  }
  ~TaskScope() {
    tls_pool = pool_;
    tls_thread_index = index_;
  }

 private:
  const ThreadPool* pool_;
  int32_t index_;
};

int32_t ExtensionNumThreads(KilnOpaqueContext* context) {
  const CallContext* c = FromOpaque(context);
  return c != nullptr && c->thread_pool != nullptr
             ? c->thread_pool->num_threads()
             : 1;
}

KilnStatus ExtensionParallelFor(KilnOpaqueContext* context, int64_t count,
                                int64_t min_range, KilnParallelForTask task,
                                void* task_data) {
  if (task == nullptr) return KILN_STATUS_INVALID_ARGUMENT;
  if (count <= 0) return KILN_STATUS_OK;
  const CallContext* c = FromOpaque(context);
  if (c == nullptr || c->thread_pool == nullptr) {
    return task(task_data, 0, count,
                tls_pool != nullptr ? tls_thread_index : 0);
  }
  return c->thread_pool->ParallelFor(count, min_range, task, task_data);
}

}  // namespace

ThreadPool::ThreadPool(int32_t num_threads)
    : num_threads_(std::max<int32_t>(1, num_threads)) {}

ThreadPool::~ThreadPool() {
  stop_.store(true, std::memory_order_seq_cst);
  {
    // A worker between its wait predicate and its wait holds mu_: taking it
    // here means the notify below reaches every sleeper.
    std::lock_guard<std::mutex> lock(mu_);
  }
  work_cv_.notify_all();
  for (std::thread& t : workers_) t.join();
}

int32_t ThreadPool::started_threads() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int32_t>(workers_.size());
}

void ThreadPool::StartWorkers() {
  if (!workers_.empty() || num_threads_ == 1) return;
  std::vector<std::thread> started;
  for (int32_t i = 1; i < num_threads_; ++i) {
    started.emplace_back([this, i] { WorkerLoop(i); });
  }
  std::lock_guard<std::mutex> lock(mu_);
  workers_ = std::move(started);
}

void ThreadPool::RunRanges(Job& job, int32_t thread_index) {
  TaskScope scope(this, thread_index);
  while (true) {
    const int64_t r = job.next.fetch_add(1, std::memory_order_relaxed);
    if (r >= job.num_ranges) return;
    const int64_t begin = r * job.range;
    const int64_t end = std::min(job.count, begin + job.range);
    const KilnStatus s = job.task(job.data, begin, end, thread_index);
    if (s != KILN_STATUS_OK) {
      int32_t ok = KILN_STATUS_OK;
      job.status.compare_exchange_strong(ok, s);
      job.next.store(job.num_ranges, std::memory_order_relaxed);
      return;
    }
  }
}

namespace {

// Spins (PAUSE) until done() or kWorkerSpinMicros pass; true when done().
template <typename Done>
bool SpinUntil(Done done) {
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::microseconds(kWorkerSpinMicros);
  do {
    for (int i = 0; i < 64; ++i) {
      if (done()) return true;
      KILN_CPU_RELAX();
    }
  } while (std::chrono::steady_clock::now() < deadline);
  return done();
}

}  // namespace

// Joining and leaving a job takes no lock (a worker that blocked on a mutex
// the caller held would join microseconds late, after the caller ran most
// ranges itself): a worker counts itself busy, then joins the job only if it
// is still open (job_ set); the caller closes it once it ran out of ranges
// and waits only for the workers counted busy, never for one that the
// scheduler has not woken yet. busy_workers_ and job_ are sequentially
// consistent, so either the worker sees the job closed or the caller sees
// it busy.
void ThreadPool::WorkerLoop(int32_t thread_index) {
  uint64_t seen = 0;
  while (true) {
    const bool posted = SpinUntil([&] {
      return generation_.load(std::memory_order_acquire) != seen ||
             stop_.load(std::memory_order_acquire);
    });
    if (!posted) {
      std::unique_lock<std::mutex> lock(mu_);
      sleeping_workers_.fetch_add(1, std::memory_order_seq_cst);
      // Woken for a job, the worker joins it if still open and spins
      // again either way: the next job is usually only microseconds away,
      // and a worker that slept until one was still open when it woke up
      // would miss every job shorter than its wake-up.
      work_cv_.wait(lock, [&] {
        return stop_.load(std::memory_order_seq_cst) ||
               generation_.load(std::memory_order_seq_cst) != seen;
      });
      sleeping_workers_.fetch_sub(1, std::memory_order_relaxed);
    }
    if (stop_.load(std::memory_order_acquire)) return;
    seen = generation_.load(std::memory_order_acquire);
    busy_workers_.fetch_add(1, std::memory_order_seq_cst);
    Job* job = job_.load(std::memory_order_seq_cst);
    if (job != nullptr) RunRanges(*job, thread_index);
    // Release: the caller may return (and free the job) once it reads 0.
    if (busy_workers_.fetch_sub(1, std::memory_order_seq_cst) == 1 &&
        caller_waiting_.load(std::memory_order_seq_cst)) {
      std::lock_guard<std::mutex> lock(mu_);
      done_cv_.notify_one();
    }
  }
}

KilnStatus ThreadPool::ParallelFor(int64_t count, int64_t min_range,
                                   KilnParallelForTask task, void* task_data) {
  if (task == nullptr) return KILN_STATUS_INVALID_ARGUMENT;
  if (count <= 0) return KILN_STATUS_OK;
  min_range = std::max<int64_t>(1, min_range);
  // Nested (from a task of this pool), a single thread, or too little work:
  // the calling thread runs it all.
  if (tls_pool == this) {
    return task(task_data, 0, count, tls_thread_index);
  }
  if (num_threads_ == 1 || count <= min_range) {
    TaskScope scope(this, 0);
    return task(task_data, 0, count, 0);
  }
  std::lock_guard<std::mutex> call_lock(call_mu_);
  StartWorkers();
  Job job;
  job.task = task;
  job.data = task_data;
  job.count = count;
  // A few ranges per thread balance the load when some threads are slow (a
  // loaded machine); never shorter than min_range.
  const int64_t wanted = static_cast<int64_t>(num_threads_) * 4;
  job.range = std::max(min_range, (count + wanted - 1) / wanted);
  job.num_ranges = (count + job.range - 1) / job.range;
  job_.store(&job, std::memory_order_seq_cst);
  generation_.fetch_add(1, std::memory_order_seq_cst);
  if (sleeping_workers_.load(std::memory_order_seq_cst) > 0) {
    // A worker that counted itself sleeping either sees the new generation
    // in its wait predicate or waits already when this takes mu_.
    { std::lock_guard<std::mutex> lock(mu_); }
    work_cv_.notify_all();
  }
  RunRanges(job, 0);
  job_.store(nullptr, std::memory_order_seq_cst);  // closed: no worker joins
  WaitForBusyWorkers();
  return static_cast<KilnStatus>(job.status.load());
}

// Sequentially consistent with the close of the job (job_ = nullptr) and a
// worker's count-in-then-join: either the worker saw the job closed or this
// sees it busy.
void ThreadPool::WaitForBusyWorkers() {
  if (SpinUntil(
          [&] { return busy_workers_.load(std::memory_order_seq_cst) == 0; })) {
    return;
  }
  std::unique_lock<std::mutex> lock(mu_);
  caller_waiting_.store(true, std::memory_order_seq_cst);
  done_cv_.wait(
      lock, [&] { return busy_workers_.load(std::memory_order_seq_cst) == 0; });
  caller_waiting_.store(false, std::memory_order_relaxed);
}

const KilnParallelForHostExtension* ParallelForHostExtension() {
  static const KilnParallelForHostExtension extension = {
      {KILN_PARALLEL_FOR_HOST_EXTENSION_STRUCT_SIZE,
       KILN_PARALLEL_FOR_HOST_EXTENSION_ID, nullptr},
      ExtensionNumThreads,
      ExtensionParallelFor};
  return &extension;
}

}  // namespace kiln
