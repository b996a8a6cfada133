// What a backend's BPF program needs of the kernel, as data: the backend declares it, the
// artifact carries it, `bwc inspect` prints it and bwrun names it when loading fails.
// Depends on nothing, so that every backend can declare its list without a cycle.
#pragma once

#include <charconv>
#include <string>
#include <string_view>
#include <vector>

namespace bw::artifact {

struct KernelFeature {
    std::string name;  // e.g. "BPF ring buffer"
    std::string since; // the first Linux release that has it, e.g. "5.8"
    std::string why;   // what the program uses it for

    bool operator==(const KernelFeature&) const = default;
};

struct KernelRequirements {
    std::string min_kernel; // the newest `since` of the features
    std::string why;        // where that minimum has been verified
    std::vector<KernelFeature> features;

    bool operator==(const KernelRequirements&) const = default;
};

// Whether a kernel release as uname(2) gives it ("6.1.0-18-amd64") is older than a
// version ("5.17"). Compares the leading dotted numbers; false when `release` has none.
inline bool kernel_older(std::string_view release, std::string_view version)
{
    // Up to three numbers; stops at the first character that is neither digit nor dot.
    auto parts = [](std::string_view text) {
        std::vector<unsigned> out;
        const char* p = text.data();
        const char* end = p + text.size();
        while (out.size() < 3 && p < end) {
            unsigned n = 0;
            const auto [next, ec] = std::from_chars(p, end, n);
            if (ec != std::errc{})
                break;
            out.push_back(n);
            p = next;
            if (p == end || *p != '.')
                break;
            ++p;
        }
        out.resize(3, 0);
        return out;
    };
    const bool parsed = !release.empty() && release.front() >= '0' && release.front() <= '9';
    return parsed && parts(release) < parts(version);
}

} // namespace bw::artifact
