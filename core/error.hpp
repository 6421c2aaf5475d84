// Errors the core reports to its callers. Messages are written for the learner: they say what is
// wrong and what to do about it, in one sentence, without internal jargon.
#pragma once

#include <stdexcept>
#include <string>

namespace attnviz {

/// Any problem with what the user asked for (bad config, bad text, bad file). The message is shown
/// as-is in the GUI status bar and printed by the headless commands.
class Error : public std::runtime_error {
  public:
    explicit Error(const std::string& message) : std::runtime_error(message) {}
};

/// A configuration that cannot be computed (heads that don't divide d_model, T <= 0, ...).
class ConfigError : public Error {
  public:
    using Error::Error;
};

/// Text that cannot be tokenized (invalid UTF-8, nothing but spaces, too many tokens).
class TextError : public Error {
  public:
    using Error::Error;
};

/// A computation abandoned because the caller asked it to stop (a newer config superseded it).
class Cancelled : public std::runtime_error {
  public:
    Cancelled() : std::runtime_error("computation cancelled") {}
};

}  // namespace attnviz
