// The byte-level encoding shared by the artifact's section and the IR inside it:
// little-endian integers (the hosts BPF runs on), strings and blobs as a u32 length and
// their bytes. Reading is bounds-checked and the first failure sticks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

namespace bw::artifact {

struct Error {
    std::string message;
};

class Writer {
public:
    void bytes(const void* p, std::size_t n)
    {
        const auto* b = static_cast<const std::byte*>(p);
        out_.insert(out_.end(), b, b + n);
    }
    template <typename T>
        requires std::is_integral_v<T>
    void num(T v)
    {
        bytes(&v, sizeof v);
    }
    void u32(std::uint32_t v) { num(v); }
    void count(std::size_t n) { u32(static_cast<std::uint32_t>(n)); }
    void str(const std::string& s)
    {
        count(s.size());
        bytes(s.data(), s.size());
    }
    void blob(std::span<const std::byte> b)
    {
        count(b.size());
        bytes(b.data(), b.size());
    }
    std::vector<std::byte> take() { return std::move(out_); }

private:
    std::vector<std::byte> out_;
};

// After a failure every read yields zeros or empty values, so a decoder may read on and
// check ok() once at the end; loops over counts should stop early on !ok().
class Reader {
public:
    explicit Reader(std::span<const std::byte> in) : in_(in) {}

    bool bytes(void* p, std::size_t n)
    {
        if (!ok_ || n > in_.size() - pos_) {
            fail("truncated");
            std::memset(p, 0, n);
            return false;
        }
        std::memcpy(p, in_.data() + pos_, n);
        pos_ += n;
        return true;
    }
    template <typename T>
        requires std::is_integral_v<T>
    T num()
    {
        T v{};
        bytes(&v, sizeof v);
        return v;
    }
    std::uint32_t u32() { return num<std::uint32_t>(); }
    // A byte that must be 0 or 1.
    bool boolean()
    {
        const auto v = num<std::uint8_t>();
        if (v > 1)
            fail("a flag is neither 0 nor 1");
        return v == 1;
    }
    std::string str()
    {
        const auto b = blob();
        return {reinterpret_cast<const char*>(b.data()), b.size()};
    }
    std::span<const std::byte> blob()
    {
        const auto n = u32();
        if (!ok_ || n > in_.size() - pos_) {
            fail("truncated");
            return {};
        }
        const auto out = in_.subspan(pos_, n);
        pos_ += n;
        return out;
    }
    // A count of items of at least `min_item_size` bytes each that the rest of the input
    // can hold; so a bogus count never drives a large allocation or a long loop.
    std::uint32_t count(std::size_t min_item_size)
    {
        const auto n = u32();
        if (ok_ && std::size_t{n} * min_item_size > in_.size() - pos_)
            fail("a count exceeds the data");
        return ok_ ? n : 0;
    }
    // Records why the input is bad; the first reason sticks.
    void fail(std::string why)
    {
        if (ok_)
            error_ = std::move(why);
        ok_ = false;
    }
    bool ok() const { return ok_; }
    bool at_end() const { return pos_ == in_.size(); }
    const std::string& error() const { return error_; }

private:
    std::span<const std::byte> in_;
    std::size_t pos_ = 0;
    bool ok_ = true;
    std::string error_;
};

} // namespace bw::artifact
