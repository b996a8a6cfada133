// bwctl: inspects and controls running sandboxes. This file reads the command line; the
// verbs live in inspect.cc (list, show, log), edit.cc (allow, deny, remove, reload) and
// stop.cc.
#include "commands.h"

#include "failure.h"
#include "version.h"

#include <charconv>
#include <optional>
#include <cstdio>
#include <exception>
#include <string>
#include <string_view>
#include <unistd.h>
#include <vector>

namespace {

using namespace bw;

void usage(std::FILE* out)
{
    std::fputs("usage: bwctl list\n"
               "       bwctl show NAME\n"
               "       bwctl allow|deny NAME PATTERN --access KINDS [--for DURATION]\n"
               "       bwctl net allow|deny NAME RULE... [--for DURATION]\n"
               "       bwctl syscall list NAME\n"
               "       bwctl syscall allow|deny NAME SYSCALL\n"
               "       bwctl remove NAME RULE-ID|PATTERN\n"
               "       bwctl reload NAME POLICY.o\n"
               "       bwctl log [-f] [--json] NAME\n"
               "       bwctl stop NAME\n"
               "       bwctl --version\n"
               "KINDS is a comma-separated list of access kinds (read,write,exec,...) as a policy\n"
               "writes them; RULE is what follows `net allow` in a policy (`tcp connect 10.0.0.1:443`);\n"
               "DURATION is a number of seconds, or a number with s, m, h or d.\n",
               out);
}

// "90", "90s", "15m", "2h", "1d"; nullopt when it is none of these or not positive.
std::optional<std::int64_t> parse_duration(std::string_view text)
{
    std::int64_t n = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
    if (ec != std::errc() || n <= 0)
        return std::nullopt;
    const std::string_view unit(end, static_cast<std::size_t>(text.data() + text.size() - end));
    const std::int64_t scale = unit.empty() || unit == "s" ? 1
                               : unit == "m"                ? 60
                               : unit == "h"                ? 3600
                               : unit == "d"                ? 86400
                                                            : 0;
    if (scale == 0 || n > (std::int64_t{1} << 40) / scale)
        return std::nullopt;
    return n * scale;
}

// The words of an edit, with its options (--access, --for) taken out wherever they are.
struct EditWords {
    std::vector<std::string> positional;
    std::string access;
    std::optional<std::int64_t> for_seconds;
};

// nullopt after a message when an option is wrong.
std::optional<EditWords> edit_words(const std::vector<std::string>& args)
{
    EditWords w;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const auto& a = args[i];
        if ((a == "--access" || a == "--for") && i + 1 == args.size()) {
            std::fprintf(stderr, "bwctl: %s needs a value\n", a.c_str());
            return std::nullopt;
        }
        if (a == "--access") {
            w.access = args[++i];
        } else if (a == "--for") {
            w.for_seconds = parse_duration(args[++i]);
            if (!w.for_seconds) {
                std::fprintf(stderr, "bwctl: `%s` is not a duration: give seconds, or a number with s, m, h or d "
                                     "(`90s`, `15m`)\n",
                             args[i].c_str());
                return std::nullopt;
            }
        } else {
            w.positional.push_back(a);
        }
    }
    return w;
}

// allow|deny NAME PATTERN --access KINDS [--for DURATION]
int rule_command(ir::Decision decision, const std::vector<std::string>& args)
{
    const auto w = edit_words(args);
    if (!w)
        return 2;
    if (w->positional.size() != 2 || w->access.empty()) {
        usage(stderr);
        return 2;
    }
    return ctl::cmd_rule({w->positional[0], decision, w->positional[1], w->access, w->for_seconds});
}

// net allow|deny NAME RULE... [--for DURATION]
int net_command(const std::vector<std::string>& args)
{
    const auto w = edit_words(args);
    if (!w)
        return 2;
    const auto& p = w->positional;
    if (p.size() < 3 || (p[0] != "allow" && p[0] != "deny") || !w->access.empty()) {
        usage(stderr);
        return 2;
    }
    return ctl::cmd_net(p[1], p[0] == "allow" ? ir::Decision::Allow : ir::Decision::Deny,
                        std::vector<std::string>(p.begin() + 2, p.end()), w->for_seconds);
}

// syscall list NAME | syscall allow|deny NAME SYSCALL
int syscall_command(const std::vector<std::string>& args)
{
    if (args.size() == 2 && args[0] == "list")
        return ctl::cmd_syscall_list(args[1]);
    if (args.size() == 3 && (args[0] == "allow" || args[0] == "deny"))
        return ctl::cmd_syscall_edit(args[1], args[0] == "allow" ? ir::Decision::Allow : ir::Decision::Deny, args[2]);
    usage(stderr);
    return 2;
}

int log_command(const std::vector<std::string>& args)
{
    bool follow = false, json = false;
    std::vector<std::string> positional;
    for (const auto& a : args) {
        if (a == "-f" || a == "--follow")
            follow = true;
        else if (a == "--json")
            json = true;
        else
            positional.push_back(a);
    }
    if (positional.size() != 1) {
        usage(stderr);
        return 2;
    }
    return ctl::cmd_log(positional[0], follow, json);
}

int dispatch(const std::string& cmd, const std::vector<std::string>& args)
{
    if (cmd == "list" && args.empty())
        return ctl::cmd_list();
    if (cmd == "show" && args.size() == 1)
        return ctl::cmd_show(args[0]);
    if (cmd == "stop" && args.size() == 1)
        return ctl::cmd_stop(args[0]);
    if (cmd == "allow" || cmd == "deny")
        return rule_command(cmd == "allow" ? ir::Decision::Allow : ir::Decision::Deny, args);
    if (cmd == "remove" && args.size() == 2)
        return ctl::cmd_remove(args[0], args[1]);
    if (cmd == "reload" && args.size() == 2)
        return ctl::cmd_reload(args[0], args[1]);
    if (cmd == "log")
        return log_command(args);
    if (cmd == "net")
        return net_command(args);
    if (cmd == "syscall")
        return syscall_command(args);
    usage(stderr);
    return 2;
}

} // namespace

int main(int argc, char** argv)
{
    const std::string cmd = argc > 1 ? argv[1] : "";
    if (cmd == "--version") {
        std::printf("bwctl %s\n", BW_VERSION_STRING);
        return 0;
    }
    if (cmd == "--help" || cmd == "-h") {
        usage(stdout);
        return 0;
    }
    const std::vector<std::string> args(argv + std::min(argc, 2), argv + argc);
    if (cmd.empty()) {
        usage(stderr);
        return 2;
    }
    if (geteuid() != 0) {
        std::fputs("bwctl: sandbox state is root-only; run bwctl as root\n", stderr);
        return 1;
    }
    try {
        return dispatch(cmd, args);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "bwctl: %s\n", e.what());
        return 1;
    }
}
