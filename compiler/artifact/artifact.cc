#include "artifact/artifact.h"

#include "artifact/ir_codec.h"
#include "source/sha256.h"
#include "syscalls/syscalls.h"

#include <bit>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <fmt/format.h>
#include <fstream>
#include <gelf.h>
#include <libelf.h>
#include <optional>
#include <sys/stat.h>
#include <unistd.h>

namespace bw::artifact {

namespace {

constexpr char kMagic[8] = {'B', 'W', 'P', 'O', 'L', 'I', 'C', 'Y'};

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

std::string_view name(Backend backend)
{
    return backend == Backend::Maps ? "maps (generic program)" : "c (specialised program)";
}

const ir::Provenance* PolicyData::rule(ir::RuleId id) const
{
    return ir::find_origin(ir, id);
}

PolicyData make_policy_data(const ir::Policy& policy, const SourceManager& sources, Backend backend,
                            MapTables tables, KernelRequirements kernel, std::string bwc_version)
{
    PolicyData data;
    data.bwc_version = std::move(bwc_version);
    data.backend = backend;
    for (FileId id = 0; id < sources.size(); ++id) {
        const auto& file = sources.file(id);
        data.sources.push_back(SourceRecord{file.name, sha256_hex(file.text)});
    }
    data.kernel = std::move(kernel);
    data.tables = std::move(tables);
    data.ir = policy;
    return data;
}

namespace {

void put(Writer& w, const KernelRequirements& k)
{
    w.str(k.min_kernel);
    w.str(k.why);
    w.count(k.features.size());
    for (const auto& f : k.features) {
        w.str(f.name);
        w.str(f.since);
        w.str(f.why);
    }
}

KernelRequirements get_kernel(Reader& r)
{
    KernelRequirements k;
    k.min_kernel = r.str();
    k.why = r.str();
    for (auto n = r.count(3 * sizeof(std::uint32_t)); n > 0 && r.ok(); --n) {
        auto& f = k.features.emplace_back();
        f.name = r.str();
        f.since = r.str();
        f.why = r.str();
    }
    return k;
}

bool is_sha256_hex(std::string_view s)
{
    return s.size() == 64 && s.find_first_not_of("0123456789abcdef") == std::string_view::npos;
}

bool is_decision(unsigned d)
{
    return d == BW_DECISION_ALLOW || d == BW_DECISION_DENY;
}

std::optional<Error> check_net_tables(const NetTables& t)
{
    if (t.policy.nrules != t.rules.size())
        return Error{"network tables are inconsistent (rule count)"};
    for (const auto& f : t.policy.families) {
        if (!is_decision(f.create_decision) || !is_decision(f.other_decision))
            return Error{"network tables are inconsistent (a family without a decision)"};
    }
    if (t.policy.conditional > 1)
        return Error{"network tables are inconsistent (conditional is not 0 or 1)"};
    for (const auto& r : t.rules) {
        const bool endpoint = r.op == BW_NET_CONNECT || r.op == BW_NET_BIND;
        // Family rules and enabling endpoints are in the scan of a conditional policy only.
        const bool scanned = t.policy.conditional && (r.op == BW_NET_FAMILY_RULE || r.op == BW_NET_ENABLE);
        if (!is_decision(r.decision) || !(endpoint || scanned))
            return Error{"network tables are inconsistent (a malformed rule)"};
    }
    return std::nullopt;
}

std::optional<Error> check_device_tables(const DeviceTables& t)
{
    if (t.rules.size() > BW_MAX_DEVICE_RULES)
        return Error{"device tables are inconsistent (too many rules)"};
    for (const auto& r : t.rules) {
        // A rule names its devices by one pattern bit, or else by type and number.
        const bool names = r.pattern != 0 ? std::has_single_bit(r.pattern) && r.type == 0
                                          : r.type == 'c' || r.type == 'b';
        if (!is_decision(r.decision) || !names || r.nioctls > BW_DEVICE_IOCTLS)
            return Error{"device tables are inconsistent (a malformed device rule)"};
    }
    return std::nullopt;
}

std::optional<Error> check_syscall_table(const bw_syscall_policy& t)
{
    std::uint32_t denied = 0;
    for (const auto& v : t.numbers) {
        if (v.decision > BW_DECISION_DENY || v.kill > 1 || v.error > 4095)
            return Error{"live syscall table is inconsistent (a malformed verdict)"};
        denied += v.decision == BW_DECISION_DENY ? 1 : 0;
    }
    if (denied != t.denied)
        return Error{"live syscall table is inconsistent (denial count)"};
    return std::nullopt;
}

// The kernel trusts these shapes; check them here rather than fail closed at run time.
std::optional<Error> check_tables(const MapTables& t)
{
    const auto& sb = t.sandbox;
    if (sb.nclasses == 0 || sb.nclasses > 256 || sb.nstates < 2 ||
        t.trans.size() != std::size_t{sb.nclasses} * sb.nstates || t.accepts.size() != sb.nstates)
        return Error{"policy tables are inconsistent"};
    for (const auto next : t.trans) {
        if ((next & ~BW_ABSORBING) >= sb.nstates)
            return Error{"policy tables are inconsistent (transition out of range)"};
    }
    for (const auto cls : sb.classes) {
        if (cls >= sb.nclasses)
            return Error{"policy tables are inconsistent (byte class out of range)"};
    }
    // Every chain ends with a link that holds whatever the process: the kernel stops there.
    if (t.links.empty() || !t.links.back().last)
        return Error{"policy tables are inconsistent (decision chains)"};
    for (const auto& a : t.accepts) {
        for (std::size_t k = 0; k < BW_ACCESS_KINDS; ++k) {
            if (a.decision[k] > BW_DECISION_CHAIN ||
                (a.decision[k] == BW_DECISION_CHAIN && (a.rule[k] == 0 || a.rule[k] >= t.links.size())))
                return Error{"policy tables are inconsistent (decision out of range)"};
        }
    }
    if (auto e = check_net_tables(t.net))
        return e;
    if (auto e = check_syscall_table(t.syscalls))
        return e;
    return check_device_tables(t.devices);
}

} // namespace

std::vector<std::byte> encode(const PolicyData& data)
{
    Writer w;
    w.bytes(kMagic, sizeof kMagic);
    w.u32(data.format_version);
    w.u32(data.abi_version);
    w.str(data.bwc_version);
    w.u32(static_cast<std::uint32_t>(data.backend));
    w.count(data.sources.size());
    for (const auto& f : data.sources) {
        w.str(f.name);
        w.str(f.sha256);
    }
    put(w, data.kernel);
    w.bytes(&data.tables.sandbox, sizeof data.tables.sandbox);
    w.count(data.tables.trans.size());
    w.bytes(data.tables.trans.data(), data.tables.trans.size() * sizeof(std::uint32_t));
    w.count(data.tables.accepts.size());
    w.bytes(data.tables.accepts.data(), data.tables.accepts.size() * sizeof(bw_accept));
    w.count(data.tables.links.size());
    w.bytes(data.tables.links.data(), data.tables.links.size() * sizeof(bw_link));
    w.bytes(&data.tables.net.policy, sizeof data.tables.net.policy);
    w.count(data.tables.net.rules.size());
    w.bytes(data.tables.net.rules.data(), data.tables.net.rules.size() * sizeof(bw_net_rule));
    w.count(data.tables.devices.rules.size());
    w.bytes(data.tables.devices.rules.data(), data.tables.devices.rules.size() * sizeof(bw_device_rule));
    w.u32(static_cast<std::uint32_t>(syscalls::kHostArch));
    w.bytes(&data.tables.syscalls, sizeof data.tables.syscalls);
    w.blob(encode_ir(data.ir));
    w.count(data.seccomp.size());
    for (const auto& f : data.seccomp) {
        w.u32(f.audit_arch);
        w.count(f.code.size());
        w.bytes(f.code.data(), f.code.size() * sizeof(sock_filter));
    }
    return w.take();
}

std::variant<PolicyData, Error> decode(std::span<const std::byte> bytes)
{
    Reader r(bytes);
    char magic[sizeof kMagic];
    if (!r.bytes(magic, sizeof magic) || std::memcmp(magic, kMagic, sizeof magic) != 0)
        return Error{"not a bumblewrap policy section (bad magic)"};
    // The magic and these two numbers keep their place in every format version, so that
    // an artifact from another version is named as such.
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
    d.bwc_version = r.str();
    const auto backend = r.u32();
    if (backend > static_cast<std::uint32_t>(Backend::C))
        r.fail(fmt::format("backend {} is out of range", backend));
    d.backend = static_cast<Backend>(backend);
    for (auto n = r.count(2 * sizeof(std::uint32_t)); n > 0 && r.ok(); --n) {
        auto& f = d.sources.emplace_back();
        f.name = r.str();
        f.sha256 = r.str();
        if (r.ok() && !is_sha256_hex(f.sha256))
            r.fail(fmt::format("the SHA-256 of {:?} is malformed", f.name));
    }
    d.kernel = get_kernel(r);
    r.bytes(&d.tables.sandbox, sizeof d.tables.sandbox);
    d.tables.trans.resize(r.count(sizeof(std::uint32_t)));
    r.bytes(d.tables.trans.data(), d.tables.trans.size() * sizeof(std::uint32_t));
    d.tables.accepts.resize(r.count(sizeof(bw_accept)));
    r.bytes(d.tables.accepts.data(), d.tables.accepts.size() * sizeof(bw_accept));
    d.tables.links.resize(r.count(sizeof(bw_link)));
    r.bytes(d.tables.links.data(), d.tables.links.size() * sizeof(bw_link));
    r.bytes(&d.tables.net.policy, sizeof d.tables.net.policy);
    d.tables.net.rules.resize(r.count(sizeof(bw_net_rule)));
    r.bytes(d.tables.net.rules.data(), d.tables.net.rules.size() * sizeof(bw_net_rule));
    d.tables.devices.rules.resize(r.count(sizeof(bw_device_rule)));
    r.bytes(d.tables.devices.rules.data(), d.tables.devices.rules.size() * sizeof(bw_device_rule));
    // Its live syscall table names syscalls by number.
    if (const auto arch = r.u32(); r.ok() && arch != static_cast<std::uint32_t>(syscalls::kHostArch))
        r.fail(fmt::format("its live syscall table holds {} syscall numbers, not this machine's; compile it on "
                           "this machine",
                           arch == static_cast<std::uint32_t>(syscalls::Arch::Aarch64) ? "aarch64" : "x86_64"));
    r.bytes(&d.tables.syscalls, sizeof d.tables.syscalls);
    const auto ir_bytes = r.blob();
    for (auto n = r.count(2 * sizeof(std::uint32_t)); n > 0 && r.ok(); --n) {
        auto& f = d.seccomp.emplace_back();
        f.audit_arch = r.u32();
        f.code.resize(r.count(sizeof(sock_filter)));
        r.bytes(f.code.data(), f.code.size() * sizeof(sock_filter));
        if (r.ok() && (f.code.empty() || f.code.size() > BPF_MAXINSNS))
            r.fail(fmt::format("a seccomp filter has {} instructions", f.code.size()));
    }
    if (r.ok() && !r.at_end())
        r.fail("trailing bytes");
    if (!r.ok())
        return Error{fmt::format("policy section is truncated or corrupt ({})", r.error())};
    if (auto e = check_tables(d.tables))
        return *e;
    auto ir = decode_ir(ir_bytes);
    if (auto* e = std::get_if<Error>(&ir))
        return *e;
    d.ir = std::move(std::get<ir::Policy>(ir));
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

std::uint64_t program_id(std::span<const std::byte> elf)
{
    std::uint64_t id = 1469598103934665603ull;
    fnv1a(id, elf.data(), elf.size());
    return id;
}

bool is_elf_file(const std::string& path)
{
    char head[SELFMAG] = {};
    std::ifstream in(path, std::ios::binary);
    return in.read(head, sizeof head) && std::memcmp(head, ELFMAG, SELFMAG) == 0;
}

std::variant<Artifact, Error> read(const std::string& path)
{
    // Read in large blocks: bwrun reads an artifact at every start, and a stream iterator
    // took 6 million instructions over a 340 KiB one. A pipe is read to its end too.
    const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return Error{fmt::format("cannot open `{}`: {}", path, errno_text())};
    Artifact a;
    struct stat st{};
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
        a.elf.reserve(static_cast<std::size_t>(st.st_size) + 1);
    for (;;) {
        const std::size_t got = a.elf.size();
        if (got >= kMaxArtifactBytes) {
            close(fd);
            return Error{fmt::format("`{}` is larger than {} MiB: it is not a policy artifact", path,
                                     kMaxArtifactBytes >> 20)};
        }
        // A regular file's reserve fits it and the read that finds its end.
        a.elf.resize(got < a.elf.capacity() ? a.elf.capacity() : got + (1 << 16));
        const ssize_t n = ::read(fd, a.elf.data() + got, a.elf.size() - got);
        if (n < 0 && errno != EINTR) {
            const std::string why = errno_text();
            close(fd);
            return Error{fmt::format("cannot read `{}`: {}", path, why)};
        }
        a.elf.resize(got + static_cast<std::size_t>(std::max<ssize_t>(n, 0)));
        if (n == 0)
            break;
    }
    close(fd);

    elf_version(EV_CURRENT);
    Elf* elf = elf_memory(reinterpret_cast<char*>(a.elf.data()), a.elf.size());
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
        fnv1a(a.program_id, t.links.data(), t.links.size() * sizeof t.links[0]);
    }
    return a;
}

} // namespace bw::artifact
