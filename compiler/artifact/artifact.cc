#include "artifact/artifact.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <fmt/format.h>
#include <fstream>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

namespace bw::artifact {

namespace {

constexpr char kMagic[8] = {'B', 'W', 'P', 'O', 'L', 'I', 'C', 'Y'};

class Writer {
public:
    void bytes(const void* p, std::size_t n)
    {
        const auto* b = static_cast<const std::byte*>(p);
        out_.insert(out_.end(), b, b + n);
    }
    void u32(std::uint32_t v) { bytes(&v, sizeof v); } // little-endian hosts only (BPF target)
    void str(const std::string& s)
    {
        u32(static_cast<std::uint32_t>(s.size()));
        bytes(s.data(), s.size());
    }
    std::vector<std::byte> take() { return std::move(out_); }

private:
    std::vector<std::byte> out_;
};

// Every read is bounds-checked; the first failure sticks and later reads yield zeros.
class Reader {
public:
    explicit Reader(std::span<const std::byte> in) : in_(in) {}

    bool bytes(void* p, std::size_t n)
    {
        if (!ok_ || n > in_.size() - pos_) {
            ok_ = false;
            std::memset(p, 0, n);
            return false;
        }
        std::memcpy(p, in_.data() + pos_, n);
        pos_ += n;
        return true;
    }
    std::uint32_t u32()
    {
        std::uint32_t v = 0;
        bytes(&v, sizeof v);
        return v;
    }
    std::string str()
    {
        const auto n = u32();
        if (!ok_ || n > in_.size() - pos_) {
            ok_ = false;
            return {};
        }
        std::string s(reinterpret_cast<const char*>(in_.data() + pos_), n);
        pos_ += n;
        return s;
    }
    // A count of items of `item_size` bytes that the rest of the input can hold.
    std::uint32_t count(std::size_t item_size)
    {
        const auto n = u32();
        if (ok_ && std::size_t{n} * item_size > in_.size() - pos_)
            ok_ = false;
        return ok_ ? n : 0;
    }
    bool ok() const { return ok_; }
    bool at_end() const { return pos_ == in_.size(); }

private:
    std::span<const std::byte> in_;
    std::size_t pos_ = 0;
    bool ok_ = true;
};

// FNV-1a, for identity rather than security.
void fnv1a(std::uint64_t& h, const void* p, std::size_t n)
{
    const auto* b = static_cast<const unsigned char*>(p);
    for (std::size_t i = 0; i < n; ++i) {
        h ^= b[i];
        h *= 1099511628211ull;
    }
}

std::string errno_text()
{
    return std::strerror(errno);
}

} // namespace

const RuleRecord* PolicyData::rule(ir::RuleId id) const
{
    for (const auto& r : rules) {
        if (r.id == id)
            return &r;
    }
    return nullptr;
}

PolicyData make_policy_data(const ir::Policy& policy, MapTables tables, std::string bwc_version)
{
    PolicyData data;
    data.bwc_version = std::move(bwc_version);
    data.policy_name = policy.name;
    data.source_files = policy.files;
    data.tables = std::move(tables);
    auto add = [&](ir::RuleId id, ir::Decision decision, const ir::Provenance& o) {
        data.rules.push_back(RuleRecord{id, decision, o.file, o.line, o.column, o.text});
    };
    for (const auto* d : {&policy.path_default, &policy.net_default, &policy.syscall_default})
        add(d->id, d->decision, d->origin);
    for (const auto& r : policy.rules)
        add(r.id, r.decision, r.origin);
    return data;
}

std::vector<std::byte> encode(const PolicyData& data)
{
    Writer w;
    w.bytes(kMagic, sizeof kMagic);
    w.u32(data.format_version);
    w.u32(data.abi_version);
    w.u32(static_cast<std::uint32_t>(data.backend));
    w.str(data.bwc_version);
    w.str(data.policy_name);
    w.u32(static_cast<std::uint32_t>(data.source_files.size()));
    for (const auto& f : data.source_files)
        w.str(f);
    w.bytes(&data.tables.sandbox, sizeof data.tables.sandbox);
    w.u32(static_cast<std::uint32_t>(data.tables.trans.size()));
    w.bytes(data.tables.trans.data(), data.tables.trans.size() * sizeof(std::uint32_t));
    w.u32(static_cast<std::uint32_t>(data.tables.accepts.size()));
    w.bytes(data.tables.accepts.data(), data.tables.accepts.size() * sizeof(bw_accept));
    w.u32(static_cast<std::uint32_t>(data.rules.size()));
    for (const auto& r : data.rules) {
        w.u32(r.id);
        w.u32(static_cast<std::uint32_t>(r.decision));
        w.str(r.file);
        w.u32(r.line);
        w.u32(r.column);
        w.str(r.text);
    }
    return w.take();
}

std::variant<PolicyData, Error> decode(std::span<const std::byte> bytes)
{
    Reader r(bytes);
    char magic[sizeof kMagic];
    if (!r.bytes(magic, sizeof magic) || std::memcmp(magic, kMagic, sizeof magic) != 0)
        return Error{"not a bumblewrap policy section (bad magic)"};
    PolicyData d;
    d.format_version = r.u32();
    if (r.ok() && d.format_version != kFormatVersion)
        return Error{fmt::format("policy format version {} is not supported (this build reads version {}); "
                                 "recompile the policy with this bwc",
                                 d.format_version, kFormatVersion)};
    d.abi_version = r.u32();
    if (r.ok() && d.abi_version != BW_ABI_VERSION)
        return Error{fmt::format("policy was built for BPF ABI {} but this build uses ABI {}; "
                                 "recompile the policy with this bwc",
                                 d.abi_version, BW_ABI_VERSION)};
    const auto backend = r.u32();
    if (r.ok() && backend > static_cast<std::uint32_t>(Backend::C))
        return Error{fmt::format("policy names an unknown backend ({})", backend)};
    d.backend = static_cast<Backend>(backend);
    d.bwc_version = r.str();
    d.policy_name = r.str();
    for (auto n = r.count(sizeof(std::uint32_t)); n > 0; --n)
        d.source_files.push_back(r.str());
    r.bytes(&d.tables.sandbox, sizeof d.tables.sandbox);
    d.tables.trans.resize(r.count(sizeof(std::uint32_t)));
    r.bytes(d.tables.trans.data(), d.tables.trans.size() * sizeof(std::uint32_t));
    d.tables.accepts.resize(r.count(sizeof(bw_accept)));
    r.bytes(d.tables.accepts.data(), d.tables.accepts.size() * sizeof(bw_accept));
    for (auto n = r.count(6 * sizeof(std::uint32_t)); n > 0; --n) {
        RuleRecord rule;
        rule.id = r.u32();
        rule.decision = r.u32() == BW_DECISION_ALLOW ? ir::Decision::Allow : ir::Decision::Deny;
        rule.file = r.str();
        rule.line = r.u32();
        rule.column = r.u32();
        rule.text = r.str();
        d.rules.push_back(std::move(rule));
    }
    if (!r.ok() || !r.at_end())
        return Error{"policy section is truncated or corrupt"};

    // The kernel trusts these shapes; check them here rather than fail closed at run time.
    const auto& sb = d.tables.sandbox;
    if (sb.nclasses == 0 || sb.nclasses > 256 || sb.nstates < 2 ||
        d.tables.trans.size() != std::size_t{sb.nclasses} * sb.nstates || d.tables.accepts.size() != sb.nstates)
        return Error{"policy tables are inconsistent"};
    for (const auto next : d.tables.trans) {
        if ((next & ~BW_ABSORBING) >= sb.nstates)
            return Error{"policy tables are inconsistent (transition out of range)"};
    }
    for (const auto cls : sb.classes) {
        if (cls >= sb.nclasses)
            return Error{"policy tables are inconsistent (byte class out of range)"};
    }
    return d;
}

std::variant<std::monostate, Error> write(const std::string& path, std::span<const std::byte> program,
                                          const PolicyData& data)
{
    const auto blob = encode(data);
    const std::string tmp = path + ".tmp." + std::to_string(getpid());
    auto fail = [&](std::string what) -> Error {
        unlink(tmp.c_str());
        return Error{std::move(what)};
    };

    const int fd = open(tmp.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return Error{errno_text()};
    std::size_t done = 0;
    while (done < program.size()) {
        const auto n = ::write(fd, program.data() + done, program.size() - done);
        if (n < 0) {
            close(fd);
            return fail(errno_text());
        }
        done += static_cast<std::size_t>(n);
    }

    elf_version(EV_CURRENT);
    Elf* elf = elf_begin(fd, ELF_C_RDWR, nullptr);
    std::size_t shstrndx = 0;
    if (elf == nullptr || elf_getshdrstrndx(elf, &shstrndx) != 0) {
        if (elf)
            elf_end(elf);
        close(fd);
        return fail(fmt::format("embedded BPF object is not ELF ({})", elf_errmsg(-1)));
    }

    // Append the section name to the section-name table, then the section itself.
    Elf_Scn* names = elf_getscn(elf, shstrndx);
    GElf_Shdr names_hdr;
    gelf_getshdr(names, &names_hdr);
    const auto name_offset = names_hdr.sh_size;
    Elf_Data* name_data = elf_newdata(names);
    name_data->d_buf = const_cast<char*>(kSectionName);
    name_data->d_size = std::strlen(kSectionName) + 1;
    name_data->d_type = ELF_T_BYTE;
    name_data->d_align = 1;

    Elf_Scn* scn = elf_newscn(elf);
    Elf_Data* data_out = elf_newdata(scn);
    data_out->d_buf = const_cast<std::byte*>(blob.data());
    data_out->d_size = blob.size();
    data_out->d_type = ELF_T_BYTE;
    data_out->d_align = 8;
    GElf_Shdr hdr;
    gelf_getshdr(scn, &hdr);
    hdr.sh_name = static_cast<Elf64_Word>(name_offset);
    hdr.sh_type = SHT_PROGBITS;
    hdr.sh_flags = 0;
    hdr.sh_addralign = 8;
    gelf_update_shdr(scn, &hdr);

    const bool ok = elf_update(elf, ELF_C_WRITE) >= 0;
    const std::string elf_error = ok ? "" : elf_errmsg(-1);
    elf_end(elf);
    if (!ok) {
        close(fd);
        return fail(elf_error);
    }
    if (fsync(fd) != 0 || close(fd) != 0)
        return fail(errno_text());
    if (rename(tmp.c_str(), path.c_str()) != 0)
        return fail(errno_text());
    return std::monostate{};
}

std::variant<Artifact, Error> read(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    if (!in)
        return Error{fmt::format("cannot open `{}`: {}", path, errno_text())};
    Artifact a;
    std::string raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    a.elf.resize(raw.size());
    std::memcpy(a.elf.data(), raw.data(), raw.size());

    elf_version(EV_CURRENT);
    Elf* elf = elf_memory(raw.data(), raw.size());
    std::size_t shstrndx = 0;
    if (elf == nullptr || elf_kind(elf) != ELF_K_ELF || elf_getshdrstrndx(elf, &shstrndx) != 0) {
        if (elf)
            elf_end(elf);
        return Error{fmt::format("`{}` is not a policy artifact (not an ELF object); compile a .bwp with bwc", path)};
    }
    std::span<const std::byte> section;
    a.program_id = 1469598103934665603ull;
    for (Elf_Scn* scn = nullptr; (scn = elf_nextscn(elf, scn)) != nullptr;) {
        GElf_Shdr hdr;
        if (gelf_getshdr(scn, &hdr) == nullptr)
            continue;
        const char* name = elf_strptr(elf, shstrndx, hdr.sh_name);
        Elf_Data* d = elf_getdata(scn, nullptr);
        if (name == nullptr || d == nullptr || d->d_buf == nullptr)
            continue;
        const auto bytes = std::span(static_cast<const std::byte*>(d->d_buf), d->d_size);
        if (std::strcmp(name, kSectionName) == 0) {
            section = bytes;
        } else {
            fnv1a(a.program_id, name, std::strlen(name));
            fnv1a(a.program_id, bytes.data(), bytes.size());
        }
    }
    if (section.empty()) {
        elf_end(elf);
        return Error{fmt::format("`{}` has no `{}` section: it is not a bumblewrap policy", path, kSectionName)};
    }
    auto decoded = decode(section);
    elf_end(elf);
    if (auto* e = std::get_if<Error>(&decoded))
        return Error{fmt::format("`{}`: {}", path, e->message)};
    a.policy = std::move(std::get<PolicyData>(decoded));
    // A specialised program is loaded with its tables: two policies that differ only in
    // them must not share a loaded program.
    if (a.policy.backend == Backend::C) {
        const auto& t = a.policy.tables;
        fnv1a(a.program_id, t.trans.data(), t.trans.size() * sizeof t.trans[0]);
        fnv1a(a.program_id, t.accepts.data(), t.accepts.size() * sizeof t.accepts[0]);
    }
    return a;
}

} // namespace bw::artifact
