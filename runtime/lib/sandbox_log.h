// Each running sandbox's log, /run/bumblewrap/log/NAME: one JSON object a line, for every
// denial, audit record, policy change and count of dropped events, written by its bwrun
// and read by `bwctl log` and `bwctl list`. Kept to kMaxBytes: the older half moves to
// NAME.1 when it is full.
#pragma once

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>

namespace bw::rt {

std::string sandbox_log_path(const std::string& name);

class SandboxLog {
public:
    static constexpr std::size_t kMaxBytes = 4u << 20;

    // Creates (truncates) the sandbox's log.
    explicit SandboxLog(std::string name);
    ~SandboxLog();
    SandboxLog(const SandboxLog&) = delete;
    SandboxLog& operator=(const SandboxLog&) = delete;

    // `json` is one object without its closing brace: the running totals are added.
    void append(const std::string& json);
    void count(bool denial) { ++(denial ? denials_ : recorded_); }
    void set_dropped(std::uint64_t dropped) { dropped_ = dropped; }
    std::uint64_t denials() const { return denials_; }
    // Removes the log (and its older half): the sandbox has ended.
    void remove();

private:
    void open_fresh();

    std::string name_;
    std::FILE* file_ = nullptr;
    std::size_t bytes_ = 0;
    std::uint64_t denials_ = 0;
    std::uint64_t recorded_ = 0;
    std::uint64_t dropped_ = 0;
};

// The running totals of the log's last line: denials so far, and events dropped.
struct LogTotals {
    std::uint64_t denials = 0;
    std::uint64_t dropped = 0;
};
std::optional<LogTotals> read_log_totals(const std::string& name);

// The value of a string or number field of one log line; nullopt when it has none.
std::optional<std::string> json_field(const std::string& line, const std::string& key);

} // namespace bw::rt
