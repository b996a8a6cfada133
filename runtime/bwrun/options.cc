#include "options.h"

#include "version.h"

#include <charconv>
#include <cstdio>
#include <string_view>

namespace bw::bwrun {

void usage(std::FILE* out)
{
    std::fputs(
        "usage: bwrun [OPTIONS] POLICY.o [--] [PROGRAM [ARGS...]]\n"
        "       bwrun [OPTIONS] --learn OUT.bwp [--] PROGRAM [ARGS...]\n"
        "\n"
        "Runs PROGRAM confined by POLICY.o (compiled by bwc). Denied accesses fail with\n"
        "EACCES and are reported on stderr with the rule that decided them. Without\n"
        "PROGRAM, runs your shell ($SHELL, else your passwd entry's, else /bin/sh).\n"
        "\n"
        "  --name NAME          sandbox name shown by `bwctl list` (default: POLICY-PID)\n"
        "  --quiet              do not report denials on stderr\n"
        "  --audit FILE         append every denial to FILE as one JSON line (never\n"
        "                       rate-limited; stderr shows at most 20 denials a second)\n"
        "  --user NAME|UID      run PROGRAM as this user, with its group and groups\n"
        "  --uid N, --gid N     run PROGRAM with this uid / primary group (no other groups)\n"
        "  --cwd DIR            run PROGRAM in DIR (entered as PROGRAM's user)\n"
        "  --setenv NAME=VALUE  set a variable of PROGRAM's environment\n"
        "  --unsetenv NAME      remove one\n"
        "  --clearenv           remove all (the three apply in the order given)\n"
        "  --no-nesting         PROGRAM cannot start nested sandboxes (no BWRUN_BROKER)\n"
        "  --vm                 when this kernel cannot enforce policies, run the whole\n"
        "                       command in the VM runner (scripts/bwvm; stdin is not passed)\n"
        "  --learn OUT.bwp      run PROGRAM with everything allowed (the sandbox invariants\n"
        "                       stay) and every access recorded, then write a policy of\n"
        "                       what it did to OUT.bwp, with the lines to review marked\n"
        "\n"
        "Credentials: under sudo (real uid 0 and SUDO_UID set) PROGRAM runs as the user who\n"
        "ran sudo, since sudo was needed for bwrun, not for PROGRAM; --user root keeps root.\n"
        "Installed setuid root, bwrun runs PROGRAM as its caller, always.\n"
        "\n"
        "Signals sent to bwrun (HUP INT QUIT TERM USR1 USR2 ALRM WINCH CONT) go to PROGRAM.\n"
        "If bwrun is killed, a watchdog kills the sandbox; it stays confined until then.\n"
        "\n"
        "Nesting: bwrun run inside a sandbox starts PROGRAM in a nested sandbox, under both\n"
        "policies; it needs no privilege. It asks the outermost bwrun through the socket\n"
        "that BWRUN_BROKER (set in PROGRAM's environment after the rules above) names.\n"
        "\n"
        "Exit status: PROGRAM's status, 128+N if it was killed by signal N, 125 if\n"
        "bwrun itself failed, 126/127 if PROGRAM could not be executed / found, 2 for\n"
        "usage errors.\n",
        out);
}

namespace {

std::optional<unsigned> parse_id(std::string_view s)
{
    unsigned v = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    // (uid_t)-1 means "unchanged" to setresuid: never a real id.
    if (s.empty() || ec != std::errc() || end != s.data() + s.size() || v == static_cast<unsigned>(-1))
        return std::nullopt;
    return v;
}

bool valid_env_name(std::string_view s)
{
    return !s.empty() && s.find('=') == std::string_view::npos;
}

class Parser {
public:
    Parser(int argc, char** argv) : argc_(argc), argv_(argv) {}

    std::optional<Options> parse(int& exit_code);

private:
    // The value of option `name` at argv[i], as `--name VALUE` or `--name=VALUE`; advances i.
    std::optional<std::string> value(std::string_view name, int& i)
    {
        const std::string_view a = argv_[i];
        if (a == name) {
            if (i + 1 >= argc_)
                return error(std::string(name) + " needs a value");
            return std::string(argv_[++i]);
        }
        return std::string(a.substr(name.size() + 1));
    }
    std::nullopt_t error(const std::string& message)
    {
        if (error_.empty())
            error_ = message;
        return std::nullopt;
    }
    bool option_is(std::string_view a, std::string_view name)
    {
        return a == name || (a.starts_with(name) && a.size() > name.size() && a[name.size()] == '=');
    }
    bool parse_option(Options& o, int& i);

    int argc_;
    char** argv_;
    std::string error_;
};

bool Parser::parse_option(Options& o, int& i)
{
    const std::string_view a = argv_[i];
    if (a == "--quiet") {
        o.quiet = true;
    } else if (a == "--no-nesting") {
        o.nesting = false;
    } else if (a == "--clearenv") {
        o.env.push_back({EnvRule::Kind::Clear, {}, {}});
    } else if (a == "--vm") {
        o.vm = true;
        o.vm_arg = i;
    } else if (option_is(a, "--learn")) {
        if (auto v = value("--learn", i); v && v->empty())
            error("--learn needs a file name for the policy");
        else if (v)
            o.learn = *v;
    } else if (option_is(a, "--name")) {
        if (auto v = value("--name", i))
            o.name = *v;
    } else if (option_is(a, "--audit")) {
        if (auto v = value("--audit", i); v && v->empty())
            error("--audit needs a file name");
        else if (v)
            o.audit = *v;
    } else if (option_is(a, "--cwd")) {
        if (auto v = value("--cwd", i); v && v->empty())
            error("--cwd needs a directory");
        else if (v)
            o.cwd = *v;
    } else if (option_is(a, "--user")) {
        if (auto v = value("--user", i); v && v->empty())
            error("--user needs a user name or uid");
        else if (v)
            o.user = *v;
    } else if (option_is(a, "--uid") || option_is(a, "--gid")) {
        const bool is_uid = a.starts_with("--uid");
        if (auto v = value(is_uid ? "--uid" : "--gid", i)) {
            const auto id = parse_id(*v);
            if (!id)
                error(std::string(is_uid ? "--uid" : "--gid") + " wants a number, got `" + *v + "`");
            (is_uid ? o.uid : o.gid) = id;
        }
    } else if (option_is(a, "--setenv")) {
        if (auto v = value("--setenv", i)) {
            const auto eq = v->find('=');
            if (eq == std::string::npos || eq == 0)
                error("--setenv wants NAME=VALUE, got `" + *v + "`");
            else
                o.env.push_back({EnvRule::Kind::Set, v->substr(0, eq), v->substr(eq + 1)});
        }
    } else if (option_is(a, "--unsetenv")) {
        if (auto v = value("--unsetenv", i); v && !valid_env_name(*v))
            error("--unsetenv wants a variable name, got `" + *v + "`");
        else if (v)
            o.env.push_back({EnvRule::Kind::Unset, *v, {}});
    } else {
        return false;
    }
    return true;
}

std::optional<Options> Parser::parse(int& exit_code)
{
    Options o;
    int i = 1;
    for (; i < argc_ && error_.empty(); ++i) {
        const std::string_view a = argv_[i];
        if (a == "--help" || a == "-h") {
            usage(stdout);
            exit_code = 0;
            return std::nullopt;
        }
        if (a == "--version") {
            std::printf("bwrun %s\n", BW_VERSION_STRING);
            exit_code = 0;
            return std::nullopt;
        }
        if (a == "--") {
            ++i;
            break;
        }
        if (parse_option(o, i))
            continue;
        if (a.starts_with("-")) {
            error("unknown option `" + std::string(a) + "`");
        } else if (o.artifact.empty() && o.learn.empty()) {
            o.artifact = a;
        } else {
            break;
        }
    }
    if (error_.empty() && !o.learn.empty() && !o.artifact.empty())
        error("--learn runs without a policy artifact: it writes one's source");
    if (error_.empty() && !o.learn.empty() && i >= argc_)
        error("--learn needs a program to run");
    if (error_.empty() && o.artifact.empty() && o.learn.empty() && i < argc_)
        o.artifact = argv_[i++];
    if (error_.empty() && o.artifact.empty() && o.learn.empty())
        error("give a policy artifact (and a program to run)");
    if (error_.empty() && o.user && (o.uid || o.gid))
        error("--user names the credentials; do not combine it with --uid or --gid");
    if (!error_.empty()) {
        std::fprintf(stderr, "bwrun: %s\n(bwrun --help lists the options)\n", error_.c_str());
        exit_code = kExitUsage;
        return std::nullopt;
    }
    for (; i < argc_; ++i)
        o.command.push_back(argv_[i]);
    o.command.push_back(nullptr);
    return o;
}

} // namespace

std::optional<Options> parse_args(int argc, char** argv, int& exit_code)
{
    return Parser(argc, argv).parse(exit_code);
}

} // namespace bw::bwrun
