#include "automata/automata.h"

#include <algorithm>
#include <bitset>
#include <fmt/format.h>
#include <map>
#include <numeric>

namespace bw {

namespace {

using ByteSet = std::bitset<256>;

// A Thompson NFA: each state has byte-set edges and epsilon edges.
struct Nfa {
    struct State {
        std::vector<std::pair<std::uint32_t, std::uint32_t>> edges; // (byte-set index, target)
        std::vector<std::uint32_t> epsilon;
        int accept = -1; // index of the rule whose pattern ends here
    };
    std::vector<State> states;
    std::vector<ByteSet> sets;

    std::uint32_t add()
    {
        states.emplace_back();
        return static_cast<std::uint32_t>(states.size() - 1);
    }
    std::uint32_t set(const ByteSet& s)
    {
        for (std::size_t i = 0; i < sets.size(); ++i) {
            if (sets[i] == s)
                return static_cast<std::uint32_t>(i);
        }
        sets.push_back(s);
        return static_cast<std::uint32_t>(sets.size() - 1);
    }
    void edge(std::uint32_t from, const ByteSet& bytes, std::uint32_t to) { states[from].edges.emplace_back(set(bytes), to); }
};

ByteSet byte(unsigned char c)
{
    ByteSet s;
    s.set(c);
    return s;
}

ByteSet not_slash()
{
    ByteSet s;
    s.set();
    s.reset('/');
    s.reset(0);
    return s;
}

ByteSet char_class(std::string_view set)
{
    const bool negate = !set.empty() && set[0] == '!';
    ByteSet s;
    for (std::size_t k = negate ? 1 : 0; k < set.size(); ++k) {
        if (k + 2 < set.size() && set[k + 1] == '-') {
            for (int c = static_cast<unsigned char>(set[k]); c <= static_cast<unsigned char>(set[k + 2]); ++c)
                s.set(static_cast<std::size_t>(c));
            k += 2;
        } else {
            s.set(static_cast<unsigned char>(set[k]));
        }
    }
    if (negate)
        s.flip();
    s.reset('/');
    s.reset(0);
    return s;
}

// Appends the NFA of one pattern from `start`; returns its end state.
std::uint32_t add_pattern(Nfa& nfa, std::uint32_t start, std::string_view pattern)
{
    std::uint32_t cur = start;
    for (const auto component : ir::components(pattern)) {
        if (component == "**") {
            // (/[^/]*)*: a loop that may be skipped.
            const auto loop = nfa.add();
            const auto body = nfa.add();
            nfa.states[cur].epsilon.push_back(loop);
            nfa.edge(loop, byte('/'), body);
            nfa.edge(body, not_slash(), body);
            nfa.states[body].epsilon.push_back(loop);
            cur = loop;
        } else {
            auto next = nfa.add();
            nfa.edge(cur, byte('/'), next);
            cur = next;
            // Components are never empty: a component of stars needs one byte.
            if (component.find_first_not_of('*') == std::string_view::npos) {
                next = nfa.add();
                nfa.edge(cur, not_slash(), next);
                cur = next;
            }
            for (std::size_t i = 0; i < component.size(); ++i) {
                const char c = component[i];
                if (c == '*') {
                    nfa.edge(cur, not_slash(), cur);
                    continue;
                }
                ByteSet bytes;
                if (c == '?') {
                    bytes = not_slash();
                } else if (c == '[') {
                    const auto close = component.find(']', i + 2);
                    bytes = char_class(component.substr(i + 1, close - i - 1));
                    i = close;
                } else {
                    bytes = byte(static_cast<unsigned char>(c));
                }
                next = nfa.add();
                nfa.edge(cur, bytes, next);
                cur = next;
            }
        }
    }
    return cur;
}

void closure(const Nfa& nfa, std::vector<std::uint32_t>& states)
{
    std::vector<bool> in(nfa.states.size());
    for (const auto s : states)
        in[s] = true;
    for (std::size_t i = 0; i < states.size(); ++i) {
        for (const auto t : nfa.states[states[i]].epsilon) {
            if (!in[t]) {
                in[t] = true;
                states.push_back(t);
            }
        }
    }
    std::sort(states.begin(), states.end());
}

// When the subset construction outgrows its bounds: the rules whose NFA states sit in the
// most DFA states so far are the ones multiplying them. `first_state[i]` is rule i's first
// NFA state; rules own consecutive ranges.
void report_too_large(const ir::Policy& policy, const std::vector<std::vector<std::uint32_t>>& sets,
                      const std::vector<std::uint32_t>& first_state, const AutomatonLimits& limits,
                      Diagnostics& diags)
{
    // Exe patterns and audit rules own the ranges after the rules'; they are not named.
    std::vector<std::size_t> states_with(first_state.size(), 0);
    std::vector<std::size_t> seen(first_state.size(), 0); // the last DFA state (+1) counted per rule
    for (std::size_t s = 0; s < sets.size(); ++s) {
        for (const auto n : sets[s]) {
            const auto it = std::upper_bound(first_state.begin(), first_state.end(), n);
            if (it == first_state.begin())
                continue; // the shared start
            const auto rule = static_cast<std::size_t>(it - first_state.begin() - 1);
            if (seen[rule] != s + 1) {
                seen[rule] = s + 1;
                ++states_with[rule];
            }
        }
    }
    std::vector<std::size_t> order(policy.rules.size());
    states_with.resize(policy.rules.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t x, std::size_t y) { return states_with[x] > states_with[y]; });
    order.resize(std::min<std::size_t>(order.size(), 3));

    const auto* worst = order.empty() ? nullptr : &policy.rules[order.front()].origin;
    auto& d = diags.report(DiagKind::AutomatonTooLarge, worst ? worst->loc : SourceLocation{}, sets.size());
    for (const auto i : order) {
        const auto& o = policy.rules[i].origin;
        d.hints.push_back(fmt::format("`{}` ({}:{}) is in {} of the {} states", o.text, o.file, o.line,
                                      states_with[i], sets.size()));
    }
    d.hints.push_back("runs of `*`, `?` and `**` multiply states: anchor them with longer literal parts, write a "
                      "run of `?` as `*` where the exact length does not matter, or fold rules into one tree "
                      "(`/dir/**`)");
    d.hints.push_back(fmt::format("the bounds: {} states, {} transitions, {} NFA states in all", limits.max_states,
                                  limits.max_transitions, limits.max_nfa_entries));
}

// Calls f(conditions, origin) for each path, audit, device and network rule: the rules
// whose conditions the kernel decides, `when exe` by the patterns the automaton records.
template <class F>
void for_each_condition(const ir::Policy& p, F f)
{
    for (const auto& r : p.rules)
        f(r.conditions, r.origin);
    for (const auto& r : p.audits)
        f(r.conditions, r.origin);
    for (const auto& r : p.devices)
        f(r.conditions, r.origin);
    for (const auto& r : p.net)
        f(r.conditions, r.origin);
}

// Rules the kernel cannot enforce yet are refused rather than silently dropped.
bool refuse_unenforced(const ir::Policy& p, Diagnostics& diags)
{
    const auto before = diags.error_count();
    auto refuse = [&](const ir::Provenance& o, const std::string& what) {
        diags.report(DiagKind::NotEnforced, o.loc, what)
            .hints.push_back("`bwc check` lints it; this build of bwrun would not enforce it, so bwc will not "
                             "compile it");
    };
    // Each distinct pattern with the first rule, in source order, that names it; the rule
    // that names the first one beyond `limit` is refused.
    auto position = [](const ir::Provenance* o) { return std::tie(o->file, o->line, o->column); };
    auto limit_distinct = [&](const std::map<std::string_view, const ir::Provenance*>& seen, std::size_t limit,
                              std::string_view what) {
        if (seen.size() <= limit)
            return;
        std::vector<const ir::Provenance*> first;
        for (const auto& [pattern, origin] : seen)
            first.push_back(origin);
        std::sort(first.begin(), first.end(), [&](auto* x, auto* y) { return position(x) < position(y); });
        refuse(*first[limit], fmt::format("more than {} distinct {} ({} in all; this rule names the first beyond)",
                                          limit, what, seen.size()));
    };
    auto note = [&](std::map<std::string_view, const ir::Provenance*>& seen, std::string_view pattern,
                    const ir::Provenance& o) {
        auto [it, inserted] = seen.try_emplace(pattern, &o);
        if (!inserted && position(&o) < position(it->second))
            it->second = &o;
    };
    std::map<std::string_view, const ir::Provenance*> exe, device_patterns;
    for_each_condition(p, [&](const ir::Conditions& c, const ir::Provenance& o) {
        for (const auto& e : c.exe)
            note(exe, e, o);
    });
    limit_distinct(exe, BW_MAX_EXE_PATTERNS, "`when exe` patterns");
    for (const auto& r : p.devices) {
        if (!r.pattern.empty())
            note(device_patterns, r.pattern, r.origin);
    }
    limit_distinct(device_patterns, BW_MAX_DEVICE_PATTERNS, "device rule patterns");
    for (const auto& r : p.devices) {
        if (r.ioctl_commands.size() > BW_DEVICE_IOCTLS)
            refuse(r.origin, fmt::format("more than {} ioctl ranges in one device rule", BW_DEVICE_IOCTLS));
    }
    return diags.error_count() == before;
}

// Fills a state's decision for one access kind: the strongest candidate when it is
// unconditional (or there is none), else a decision chain. Equal chains are shared.
class ChainBuilder {
public:
    ChainBuilder(const ir::Policy& policy, Automaton& a) : policy_(policy), a_(a) {}

    // The evaluator's precedence; larger decides.
    auto rank(std::size_t i) const
    {
        const auto& r = policy_.rules[i];
        return std::tuple{r.invariant, ir::specificity(r.pattern), r.conditions.count(),
                          r.decision == ir::Decision::Deny};
    }

    void decide(std::vector<std::size_t> rules, ir::Access access, StateAccept& acc)
    {
        std::erase_if(rules, [&](std::size_t i) { return !(policy_.rules[i].accesses & ir::bit(access)); });
        // Strongest first; among equals the lowest id, as in ir::evaluate.
        std::sort(rules.begin(), rules.end(), [&](std::size_t x, std::size_t y) {
            const auto rx = rank(x), ry = rank(y);
            return rx != ry ? rx > ry : x < y;
        });
        const auto k = static_cast<std::size_t>(access);
        if (rules.empty())
            return;
        if (policy_.rules[rules.front()].conditions.count() == 0) {
            acc.rule[k] = policy_.rules[rules.front()].id;
            acc.decision[k] = static_cast<std::uint8_t>(policy_.rules[rules.front()].decision);
            return;
        }
        std::vector<Link> chain;
        for (const auto i : rules) {
            const auto& r = policy_.rules[i];
            chain.push_back({condition_index(r.conditions), static_cast<std::uint8_t>(r.decision), r.id});
            if (chain.back().conditions == 0)
                break;
        }
        if (chain.back().conditions != 0)
            chain.push_back(Link{}); // no unconditional candidate: the default decides
        acc.decision[k] = BW_DECISION_CHAIN;
        acc.rule[k] = chain_start(chain);
    }

    // The audit chain of the audit rules `audits` (indices into policy.audits) that match.
    void audit(std::vector<std::size_t> audits, StateAccept& acc)
    {
        if (audits.empty())
            return;
        auto rank = [&](std::size_t i) {
            const auto& r = policy_.audits[i];
            return std::tuple{ir::specificity(r.pattern), r.conditions.count()};
        };
        std::sort(audits.begin(), audits.end(), [&](std::size_t x, std::size_t y) {
            const auto rx = rank(x), ry = rank(y);
            return rx != ry ? rx > ry : x < y;
        });
        std::vector<Link> chain;
        for (const auto i : audits) {
            const auto& r = policy_.audits[i];
            chain.push_back({condition_index(r.conditions), BW_DECISION_ALLOW, r.id, r.accesses});
        }
        chain.push_back(Link{});
        acc.audit = chain_start(chain);
    }

private:
    std::uint32_t condition_index(const ir::Conditions& c)
    {
        const auto it = std::find(a_.conditions.begin(), a_.conditions.end(), c);
        if (it != a_.conditions.end())
            return static_cast<std::uint32_t>(it - a_.conditions.begin());
        a_.conditions.push_back(c);
        return static_cast<std::uint32_t>(a_.conditions.size() - 1);
    }

    std::uint32_t chain_start(const std::vector<Link>& chain)
    {
        std::vector<std::tuple<std::uint32_t, std::uint8_t, ir::RuleId, ir::AccessMask>> key;
        for (const auto& l : chain)
            key.emplace_back(l.conditions, l.decision, l.rule, l.kinds);
        const auto [it, inserted] = starts_.try_emplace(key, static_cast<std::uint32_t>(a_.links.size()));
        if (inserted)
            a_.links.insert(a_.links.end(), chain.begin(), chain.end());
        return it->second;
    }

    const ir::Policy& policy_;
    Automaton& a_;
    std::map<std::vector<std::tuple<std::uint32_t, std::uint8_t, ir::RuleId, ir::AccessMask>>, std::uint32_t> starts_;
};

} // namespace

std::optional<Automaton> run_compile_paths(const ir::Policy& policy, Diagnostics& diags,
                                          const AutomatonLimits& limits)
{
    if (!refuse_unenforced(policy, diags))
        return std::nullopt;

    Automaton a;
    for_each_condition(policy, [&](const ir::Conditions& c, const ir::Provenance&) {
        for (const auto& e : c.exe) {
            if (std::find(a.exe_patterns.begin(), a.exe_patterns.end(), e) == a.exe_patterns.end())
                a.exe_patterns.push_back(e);
        }
    });
    for (const auto& r : policy.devices) {
        if (!r.pattern.empty() &&
            std::find(a.device_patterns.begin(), a.device_patterns.end(), r.pattern) == a.device_patterns.end())
            a.device_patterns.push_back(r.pattern);
    }

    // One NFA for all patterns, from a shared start: the rules' (accept i: rule i), the
    // exe patterns' (accept rules + j: exe pattern j), the device patterns' (accept
    // rules + exe patterns + d: device pattern d), then the audit rules' (accept after
    // those + k: audit rule k).
    Nfa nfa;
    const auto start = nfa.add();
    std::vector<std::uint32_t> first_state;
    auto add = [&](std::string_view pattern) {
        const auto begin = nfa.add();
        first_state.push_back(begin);
        nfa.states[start].epsilon.push_back(begin);
        const auto end = add_pattern(nfa, begin, pattern);
        const auto accept = nfa.add();
        nfa.states[end].epsilon.push_back(accept);
        nfa.states[accept].accept = static_cast<int>(first_state.size() - 1);
    };
    for (const auto& r : policy.rules)
        add(r.pattern);
    for (const auto& e : a.exe_patterns)
        add(e);
    for (const auto& d : a.device_patterns)
        add(d);
    for (const auto& r : policy.audits)
        add(r.pattern);

    // Byte classes: bytes that belong to exactly the same edge sets behave alike.
    std::map<std::vector<bool>, std::uint8_t> signatures;
    std::vector<bool> none(nfa.sets.size(), false);
    signatures[none] = 0;
    for (int b = 1; b < 256; ++b) {
        std::vector<bool> sig(nfa.sets.size());
        for (std::size_t i = 0; i < nfa.sets.size(); ++i)
            sig[i] = nfa.sets[i].test(static_cast<std::size_t>(b));
        const auto [it, inserted] = signatures.try_emplace(sig, static_cast<std::uint8_t>(signatures.size()));
        a.classes[static_cast<std::size_t>(b)] = it->second;
    }
    a.nclasses = static_cast<std::uint32_t>(signatures.size());
    std::vector<unsigned char> representative(a.nclasses, 0);
    for (int b = 255; b >= 1; --b)
        representative[a.classes[static_cast<std::size_t>(b)]] = static_cast<unsigned char>(b);

    // Subset construction. DFA state 0 is dead (the empty set), 1 the start.
    std::map<std::vector<std::uint32_t>, std::uint32_t> ids;
    std::vector<std::vector<std::uint32_t>> sets{{}, {start}};
    closure(nfa, sets[1]);
    ids[sets[0]] = BW_DEAD_STATE;
    ids[sets[1]] = BW_START_STATE;
    std::size_t nfa_entries = sets[1].size();
    for (std::uint32_t s = BW_START_STATE; s < sets.size(); ++s) {
        for (std::uint32_t cls = 0; cls < a.nclasses; ++cls) {
            std::vector<std::uint32_t> target;
            if (cls != 0) {
                const auto b = representative[cls];
                for (const auto n : sets[s]) {
                    for (const auto& [set, to] : nfa.states[n].edges) {
                        if (nfa.sets[set].test(b))
                            target.push_back(to);
                    }
                }
                closure(nfa, target);
                target.erase(std::unique(target.begin(), target.end()), target.end());
            }
            auto [it, inserted] = ids.try_emplace(target, static_cast<std::uint32_t>(sets.size()));
            if (inserted) {
                nfa_entries += target.size();
                if (sets.size() >= limits.max_states || sets.size() * a.nclasses > limits.max_transitions ||
                    nfa_entries > limits.max_nfa_entries) {
                    report_too_large(policy, sets, first_state, limits, diags);
                    return std::nullopt;
                }
                sets.push_back(std::move(target));
            }
            a.trans.push_back(it->second);
        }
    }
    a.nstates = static_cast<std::uint32_t>(sets.size());
    // Row 0 (dead) was never expanded: it goes nowhere.
    a.trans.insert(a.trans.begin(), a.nclasses, BW_DEAD_STATE);

    // Decisions per state and access kind, by the evaluator's precedence.
    a.accepts.resize(a.nstates);
    ChainBuilder chains(policy, a);
    for (std::uint32_t s = 0; s < a.nstates; ++s) {
        auto& acc = a.accepts[s];
        std::vector<std::size_t> matching, audits;
        const auto devices_from = policy.rules.size() + a.exe_patterns.size();
        const auto audits_from = devices_from + a.device_patterns.size();
        for (const auto n : sets[s]) {
            if (nfa.states[n].accept < 0)
                continue;
            const auto accept = static_cast<std::size_t>(nfa.states[n].accept);
            if (accept < policy.rules.size())
                matching.push_back(accept);
            else if (accept < devices_from)
                acc.exe |= 1u << (accept - policy.rules.size());
            else if (accept < audits_from)
                acc.devices |= 1u << (accept - devices_from);
            else
                audits.push_back(accept - audits_from);
        }
        chains.audit(audits, acc);
        for (std::size_t k = 0; k < ir::kAccessKinds; ++k)
            chains.decide(matching, static_cast<ir::Access>(k), acc);
        bool absorbing = s != BW_DEAD_STATE;
        for (std::uint32_t cls = 1; cls < a.nclasses && absorbing; ++cls)
            absorbing = a.trans[std::size_t{s} * a.nclasses + cls] == s;
        acc.absorbing = absorbing;
    }
    return a;
}

std::uint32_t exe_mask(const Automaton& a, const ir::Conditions& c)
{
    std::uint32_t mask = 0;
    for (const auto& e : c.exe)
        mask |= 1u << (std::find(a.exe_patterns.begin(), a.exe_patterns.end(), e) - a.exe_patterns.begin());
    return mask;
}

bw_link condition_link(const Automaton& a, const ir::Conditions& c)
{
    bw_link out{};
    out.exe = exe_mask(a, c);
    out.owner = c.owner;
    out.open_flags = c.open_flags;
    out.uid_hi = out.gid_hi = UINT32_MAX;
    if (c.uid) {
        out.uid_lo = c.uid->lo;
        out.uid_hi = c.uid->hi;
    }
    if (c.gid) {
        out.gid_lo = c.gid->lo;
        out.gid_hi = c.gid->hi;
    }
    return out;
}

std::string condition_text(const bw_link& w)
{
    if (w.uid_lo == 0 && w.uid_hi == UINT32_MAX && w.gid_lo == 0 && w.gid_hi == UINT32_MAX && !w.owner &&
        w.open_flags == 0 && w.exe == 0)
        return "";
    return fmt::format(" when uid {}-{} gid {}-{} owner {} flags {:#x} exe {:#x}", w.uid_lo, w.uid_hi, w.gid_lo,
                       w.gid_hi, w.owner, w.open_flags, w.exe);
}

std::uint32_t device_pattern_bit(const Automaton& a, const ir::DeviceRule& rule)
{
    if (rule.pattern.empty())
        return 0;
    const auto at = std::find(a.device_patterns.begin(), a.device_patterns.end(), rule.pattern);
    return 1u << (at - a.device_patterns.begin());
}

namespace {

// Mirrors bw_policy_byte() in generic.bpf.c.
std::uint32_t walk(const Automaton& a, std::string_view path)
{
    std::uint32_t state = BW_START_STATE;
    for (const char c : path) {
        state = a.next(state, static_cast<unsigned char>(c));
        if (state == BW_DEAD_STATE || a.accepts[state].absorbing)
            break;
    }
    return state;
}

// Mirrors bw_link_holds() in decide.bpf.h: the exe patterns come from the walk of the
// executable's path, as bprm_check_security records them.
bool link_holds(const Automaton& a, const Link& link, const ir::PathQuery& q)
{
    const auto& c = a.conditions[link.conditions];
    auto others = c;
    others.exe.clear();
    const auto task_exe = a.accepts[walk(a, q.exe)].exe;
    const auto mask = exe_mask(a, c);
    return (task_exe & mask) == mask && ir::conditions_hold(others, q);
}

} // namespace

ir::RuleId simulate_audit(const Automaton& a, const ir::PathQuery& q)
{
    // Mirrors bw_chain_audit() in decide.bpf.h.
    for (auto i = a.accepts[walk(a, q.path)].audit; i != 0; ++i) {
        const auto& link = a.links[i];
        if (link.decision == BW_DECISION_NONE)
            return 0;
        if ((link.kinds & ir::bit(q.access)) && link_holds(a, link, q))
            return link.rule;
    }
    return 0;
}

const StateAccept& simulate_walk(const Automaton& a, std::string_view path)
{
    return a.accepts[walk(a, path)];
}

ir::Verdict simulate(const Automaton& a, const ir::Policy& policy, const ir::PathQuery& q)
{
    // Mirrors bw_check_access() and bw_chain_decide() in decide.bpf.h.
    const auto state = walk(a, q.path);
    const auto k = static_cast<std::size_t>(q.access);
    Link link{0, a.accepts[state].decision[k], a.accepts[state].rule[k]};
    if (link.decision == BW_DECISION_CHAIN) {
        for (auto i = link.rule;; ++i) {
            if (link = a.links[i]; link_holds(a, link, q))
                break;
        }
    }
    if (link.decision == BW_DECISION_NONE)
        return {policy.path_default.decision, policy.path_default.id};
    return {static_cast<ir::Decision>(link.decision), link.rule};
}

std::string dump(const Automaton& a)
{
    std::string out = fmt::format("automaton: {} states, {} byte classes, {} transitions\n", a.nstates, a.nclasses,
                                  a.trans.size());
    for (std::uint32_t s = BW_START_STATE; s < a.nstates; ++s) {
        out += fmt::format("  state {}{}", s, a.accepts[s].absorbing ? " (absorbing)" : "");
        if (a.accepts[s].exe != 0)
            out += fmt::format(" exe={:#x}", a.accepts[s].exe);
        if (a.accepts[s].audit != 0)
            out += fmt::format(" audit=chain@{}", a.accepts[s].audit);
        if (a.accepts[s].devices != 0)
            out += fmt::format(" devices={:#x}", a.accepts[s].devices);
        for (std::size_t k = 0; k < ir::kAccessKinds; ++k) {
            const auto d = a.accepts[s].decision[k];
            if (d != BW_DECISION_NONE)
                out += fmt::format(" {}={}{}", ir::name(static_cast<ir::Access>(k)),
                                   d == BW_DECISION_CHAIN ? "chain@" : d == BW_DECISION_ALLOW ? "allow#" : "deny#",
                                   a.accepts[s].rule[k]);
        }
        out += "\n";
        // Group the bytes by target state, for a readable table.
        std::map<std::uint32_t, std::string> by_target;
        for (unsigned b = 1; b < 256; ++b) {
            const auto next = a.trans[std::size_t{s} * a.nclasses + a.classes[b]];
            if (next == BW_DEAD_STATE)
                continue;
            auto& bytes = by_target[next];
            if (bytes.size() < 24)
                bytes += b >= 0x20 && b < 0x7f ? std::string(1, static_cast<char>(b)) : fmt::format("\\x{:02x}", b);
            else if (!bytes.ends_with("..."))
                bytes += "...";
        }
        for (const auto& [next, bytes] : by_target)
            out += fmt::format("    [{}] -> {}\n", bytes, next);
    }
    for (std::uint32_t i = 1; i < a.links.size(); ++i) {
        const auto& l = a.links[i];
        if (l.kinds != 0) {
            out += fmt::format("  link {}: if conditions {} then audit {} #{}\n", i, l.conditions,
                               ir::to_string(l.kinds), l.rule);
            continue;
        }
        out += fmt::format("  link {}: if conditions {} then {} #{}{}\n", i, l.conditions,
                           l.decision == BW_DECISION_NONE ? "default" : l.decision == BW_DECISION_ALLOW ? "allow" : "deny",
                           l.rule, l.conditions == 0 ? " (end)" : "");
    }
    for (std::size_t i = 0; i < a.exe_patterns.size(); ++i)
        out += fmt::format("  exe pattern {:#x}: {}\n", 1u << i, a.exe_patterns[i]);
    for (std::size_t i = 0; i < a.device_patterns.size(); ++i)
        out += fmt::format("  device pattern {:#x}: {}\n", 1u << i, a.device_patterns[i]);
    return out;
}

} // namespace bw
