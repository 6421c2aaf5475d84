// The app's one clock: seconds on the monotonic steady clock (frame times, play, wake-ups, logs).
#pragma once

#include <chrono>

namespace attnviz::app {

inline double now_seconds() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace attnviz::app
