#include "credentials.h"

#include "failure.h"

#include <cstdlib>
#include <fmt/format.h>
#include <grp.h>
#include <pwd.h>
#include <unistd.h>

namespace bw::bwrun {

namespace {

// The user's primary group and every group that lists them, as login would set them.
Credentials of_user(const passwd& pw)
{
    Credentials c{pw.pw_uid, pw.pw_gid, {}, pw.pw_shell ? pw.pw_shell : ""};
    int n = 32;
    for (;;) {
        c.groups.resize(static_cast<std::size_t>(n));
        const int want = n;
        if (getgrouplist(pw.pw_name, pw.pw_gid, c.groups.data(), &n) >= 0) {
            c.groups.resize(static_cast<std::size_t>(n));
            return c;
        }
        if (n <= want)
            n = want * 2;
    }
}

std::optional<Credentials> lookup_uid(uid_t uid)
{
    if (const passwd* pw = getpwuid(uid))
        return of_user(*pw);
    return std::nullopt;
}

Credentials lookup_user(const std::string& user)
{
    const passwd* pw = getpwnam(user.c_str());
    if (pw == nullptr && user.find_first_not_of("0123456789") == std::string::npos)
        pw = getpwuid(static_cast<uid_t>(std::strtoul(user.c_str(), nullptr, 10)));
    if (pw == nullptr)
        throw rt::Failure(fmt::format("no user `{}` in the user database; use --uid and --gid for ids "
                                      "without an entry",
                                      user));
    return of_user(*pw);
}

// bwrun's caller: its real ids and its groups.
Credentials caller()
{
    Credentials c{getuid(), getgid(), {}, {}};
    const int n = getgroups(0, nullptr);
    c.groups.resize(static_cast<std::size_t>(std::max(n, 0)));
    if (n > 0 && getgroups(n, c.groups.data()) != n)
        rt::fail_errno("cannot read the caller's groups");
    if (const auto known = lookup_uid(c.uid))
        c.shell = known->shell;
    return c;
}

// Under sudo, the user who ran it (sudo sets SUDO_UID and SUDO_GID).
std::optional<Credentials> sudo_user()
{
    const char* uid = std::getenv("SUDO_UID");
    const char* gid = std::getenv("SUDO_GID");
    if (getuid() != 0 || uid == nullptr || *uid == '\0')
        return std::nullopt;
    const auto u = static_cast<uid_t>(std::strtoul(uid, nullptr, 10));
    auto c = lookup_uid(u).value_or(Credentials{u, u, {}, {}});
    if (gid != nullptr && *gid != '\0')
        c.gid = static_cast<gid_t>(std::strtoul(gid, nullptr, 10));
    if (c.groups.empty())
        c.groups.push_back(c.gid);
    return c;
}

Credentials requested(const Options& o)
{
    if (o.user)
        return lookup_user(*o.user);
    const uid_t uid = o.uid ? static_cast<uid_t>(*o.uid) : getuid();
    auto c = lookup_uid(uid).value_or(Credentials{uid, static_cast<gid_t>(uid), {}, {}});
    if (o.gid)
        c.gid = static_cast<gid_t>(*o.gid);
    // Explicit ids mean exactly these ids: no groups picked up from the database.
    c.groups = {c.gid};
    return c;
}

} // namespace

Credentials decide_credentials(const Options& o, bool setuid_mode)
{
    const bool asked = o.user || o.uid || o.gid;
    if (setuid_mode) {
        auto c = caller();
        if (asked) {
            const auto r = requested(o);
            if (r.uid != c.uid || r.gid != c.gid)
                throw rt::Failure("bwrun is installed setuid root: it runs the program as you; --user, --uid and "
                                  "--gid cannot name anyone else (run bwrun as root for that)");
        }
        return c;
    }
    if (asked)
        return requested(o);
    if (auto s = sudo_user())
        return *s;
    return caller();
}

const char* drop_to(const Credentials& c)
{
    if (setgroups(c.groups.size(), c.groups.data()) != 0)
        return "cannot set the program's groups (setgroups)";
    if (setresgid(c.gid, c.gid, c.gid) != 0)
        return "cannot set the program's group (setresgid)";
    if (setresuid(c.uid, c.uid, c.uid) != 0)
        return "cannot set the program's user (setresuid)";
    uid_t r = 0, e = 0, s = 0;
    gid_t rg = 0, eg = 0, sg = 0;
    if (getresuid(&r, &e, &s) != 0 || r != c.uid || e != c.uid || s != c.uid)
        return "the program's user did not change";
    if (getresgid(&rg, &eg, &sg) != 0 || rg != c.gid || eg != c.gid || sg != c.gid)
        return "the program's group did not change";
    if (c.uid != 0 && (setuid(0) == 0 || seteuid(0) == 0))
        return "the program could regain root after dropping it";
    return nullptr;
}

} // namespace bw::bwrun
