#include "core/thread_pool.hpp"

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "core/error.hpp"

namespace attnviz {

int resolve_threads(int requested) {
    const unsigned hw = std::thread::hardware_concurrency();
    const int cores = hw == 0 ? 1 : int(hw);
    // Threads beyond the cores buy nothing but their buffers (and the pool keeps every thread made).
    return requested > 0 ? std::min(requested, cores) : cores;
}

namespace {

// One parallel_for call. Lives on the caller's stack; the pool only borrows it while it is queued
// or a helper is working on it, and the caller waits for both to end before returning.
struct Job {
    const std::function<void(int)>* fn = nullptr;
    const std::atomic<bool>* cancel = nullptr;
    int count = 0;
    int slots = 0;   // helpers still wanted (guarded by Pool::mutex)
    int active = 0;  // helpers currently working on it (guarded by Pool::mutex)
    std::atomic<int> next{0};
    std::atomic<bool> failed{false};
    std::mutex error_mutex;
    std::exception_ptr error;

    // Takes tasks until none are left (or one failed / the caller cancelled).
    void work() {
        for (;;) {
            if (failed.load() || (cancel && cancel->load())) return;
            const int i = next.fetch_add(1);
            if (i >= count) return;
            try {
                (*fn)(i);
            } catch (...) {
                std::lock_guard<std::mutex> lock(error_mutex);
                if (!error) error = std::current_exception();
                failed.store(true);
                return;
            }
        }
    }
};

class Pool {
  public:
    // Runs `job` on the calling thread plus up to `helpers` pool threads.
    void run(Job& job, int helpers) {
        {
            std::unique_lock<std::mutex> lock(mutex_);
            grow(helpers);
            job.slots = std::min(helpers, int(threads_.size()));
            if (job.slots > 0) {
                queue_.push_back(&job);
                wake_.notify_all();
            }
        }
        job.work();
        std::unique_lock<std::mutex> lock(mutex_);
        // Every task is taken: helpers that have not picked the job up yet must not start now.
        queue_.erase(std::remove(queue_.begin(), queue_.end(), &job), queue_.end());
        done_.wait(lock, [&] { return job.active == 0; });
    }

  private:
    // Starts threads until there are `want` (called with the mutex held). If the system refuses
    // a thread, the pool stays smaller and the callers do more of the work themselves.
    void grow(int want) {
        while (int(threads_.size()) < want) {
            try {
                threads_.emplace_back([this] { loop(); });
            } catch (...) {
                return;
            }
        }
    }

    void loop() {
        std::unique_lock<std::mutex> lock(mutex_);
        for (;;) {
            wake_.wait(lock, [&] { return !queue_.empty(); });
            Job* job = queue_.front();
            if (--job->slots == 0) queue_.pop_front();
            ++job->active;
            lock.unlock();
            job->work();
            lock.lock();
            if (--job->active == 0) done_.notify_all();
        }
    }

    std::mutex mutex_;
    std::condition_variable wake_;  // a job was queued
    std::condition_variable done_;  // a helper left a job
    std::deque<Job*> queue_;
    std::vector<std::thread> threads_;
};

// Never destroyed: the threads sleep until the process exits (joining them from a static
// destructor could deadlock if another thread still computes a trace at exit).
Pool& pool() {
    static Pool* p = new Pool;
    return *p;
}

}  // namespace

void parallel_for(int count, int threads, const std::function<void(int)>& fn,
                  const std::atomic<bool>* cancel) {
    if (count <= 0) return;
    const int workers = std::max(1, std::min(resolve_threads(threads), count));
    Job job;
    job.fn = &fn;
    job.cancel = cancel;
    job.count = count;
    if (workers == 1)
        job.work();
    else
        pool().run(job, workers - 1);
    if (job.error) std::rethrow_exception(job.error);
    if (cancel && cancel->load()) throw Cancelled();
}

}  // namespace attnviz
