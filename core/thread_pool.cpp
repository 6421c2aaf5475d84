#include "core/thread_pool.hpp"

#include <algorithm>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "core/error.hpp"

namespace attnviz {

int resolve_threads(int requested) {
    if (requested > 0) return requested;
    const unsigned hw = std::thread::hardware_concurrency();
    return hw == 0 ? 1 : int(hw);
}

void parallel_for(int count, int threads, const std::function<void(int)>& fn,
                  const std::atomic<bool>* cancel) {
    if (count <= 0) return;
    const int workers = std::max(1, std::min(resolve_threads(threads), count));
    std::atomic<int> next{0};
    std::atomic<bool> failed{false};
    std::exception_ptr error;
    std::mutex error_mutex;

    auto work = [&] {
        for (;;) {
            if (failed.load() || (cancel && cancel->load())) return;
            const int i = next.fetch_add(1);
            if (i >= count) return;
            try {
                fn(i);
            } catch (...) {
                std::lock_guard<std::mutex> lock(error_mutex);
                if (!error) error = std::current_exception();
                failed.store(true);
                return;
            }
        }
    };

    std::vector<std::thread> pool;
    pool.reserve(std::size_t(workers - 1));
    try {
        for (int t = 1; t < workers; ++t) pool.emplace_back(work);
    } catch (...) {
        // Could not start a thread (resource limits): the calling thread does the rest alone.
    }
    work();
    for (auto& t : pool) t.join();
    if (error) std::rethrow_exception(error);
    if (cancel && cancel->load()) throw Cancelled();
}

}  // namespace attnviz
