// The parse stage: checks the encoding, runs the ANTLR parser with our own error reporting and
// converts an error-free parse tree into ast::Module. No ANTLR type leaves this file.
#include "parse/parse.h"

// After parse.h on purpose: the ANTLR headers #undef the EOF macro of <cstdio>, which its
// include guard then keeps from coming back.
#include <BwpLexer.h>
#include <BwpParser.h>

#include <algorithm>
#include <cctype>
#include <exception>
#include <initializer_list>
#include <memory>
#include <string_view>
#include <utility>
#include <vector>

namespace bw {
namespace {

using grammar::BwpLexer;
using grammar::BwpParser;

// Past the first few, syntax errors mostly repeat the consequences of earlier ones.
constexpr std::size_t kMaxSyntaxErrors = 20;
// Tokens quoted in messages are cut to this many bytes: garbage input can be one huge token.
constexpr std::size_t kMaxQuotedBytes = 40;
constexpr std::string_view kUtf8Bom = "\xef\xbb\xbf";
// `when` blocks nest by recursion in the parser, the AST builder and every later stage, so a
// file nesting thousands of them would exhaust the stack. No policy needs this many.
constexpr std::size_t kMaxWhenDepth = 100;

struct EncodingError {
    std::size_t offset;
    std::string message;
};

// Length of the well-formed UTF-8 sequence at the start of `s` (whose first byte is not
// ASCII), or 0 when it is malformed: overlong forms, surrogates and code points above
// U+10FFFF count as malformed.
std::size_t utf8_sequence_length(std::string_view s)
{
    const int lead = static_cast<unsigned char>(s[0]);
    std::size_t length = 0;
    int second_min = 0x80;
    int second_max = 0xbf;
    if (lead >= 0xc2 && lead <= 0xdf) {
        length = 2;
    } else if (lead >= 0xe0 && lead <= 0xef) {
        length = 3;
        second_min = lead == 0xe0 ? 0xa0 : second_min;
        second_max = lead == 0xed ? 0x9f : second_max;
    } else if (lead >= 0xf0 && lead <= 0xf4) {
        length = 4;
        second_min = lead == 0xf0 ? 0x90 : second_min;
        second_max = lead == 0xf4 ? 0x8f : second_max;
    } else {
        return 0;
    }
    if (s.size() < length)
        return 0;
    for (std::size_t i = 1; i < length; ++i) {
        const int byte = static_cast<unsigned char>(s[i]);
        if (byte < (i == 1 ? second_min : 0x80) || byte > (i == 1 ? second_max : 0xbf))
            return 0;
    }
    return length;
}

// ANTLR's runtime throws on invalid UTF-8, and a NUL byte is never meant in a policy, so the
// text is checked before ANTLR sees it.
std::optional<EncodingError> find_encoding_error(std::string_view text)
{
    for (std::size_t i = 0; i < text.size();) {
        const auto byte = static_cast<unsigned char>(text[i]);
        if (byte == 0)
            return EncodingError{i, "file contains a NUL byte"};
        if (byte < 0x80) {
            ++i;
            continue;
        }
        const auto length = utf8_sequence_length(text.substr(i));
        if (length == 0)
            return EncodingError{i, fmt::format("invalid UTF-8 (byte 0x{:02x})", byte)};
        i += length;
    }
    return std::nullopt;
}

// Translates ANTLR positions into ours. ANTLR counts code points from the start of its input,
// after the `skipped` bytes of a BOM it dropped; SourceLocation counts bytes and 1-based lines.
class TextIndex {
public:
    TextIndex(const SourceFile& file, std::size_t skipped)
        : file_(file.id), text_(file.text), skipped_(skipped)
    {
        line_starts_.push_back(0);
        std::size_t extra = 0; // bytes beyond one per code point, so far
        for (std::size_t i = 0; i < text_.size(); ++i) {
            const auto byte = static_cast<unsigned char>(text_[i]);
            if (byte == '\n') {
                line_starts_.push_back(i + 1);
            } else if (byte >= 0xc0 && i >= skipped_) {
                const std::size_t length = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : 2;
                const std::size_t code_point = i - skipped_ - extra;
                extra += length - 1;
                wide_.emplace_back(code_point + 1, extra);
            }
        }
    }

    std::size_t byte_offset(std::size_t code_point) const
    {
        // The last multi-byte character before `code_point` tells how many extra bytes precede it.
        const auto after = std::upper_bound(wide_.begin(), wide_.end(), code_point,
                                            [](std::size_t cp, const auto& w) { return cp < w.first; });
        const std::size_t extra = after == wide_.begin() ? 0 : std::prev(after)->second;
        return skipped_ + code_point + extra;
    }

    std::size_t begin(const antlr4::Token& token) const { return byte_offset(token.getStartIndex()); }
    std::size_t end(const antlr4::Token& token) const { return byte_offset(token.getStopIndex() + 1); }

    // Bytes [begin, end), cut at the end of begin's line: the renderer underlines one line.
    SourceLocation locate(std::size_t begin, std::size_t end) const
    {
        const auto next_line = std::upper_bound(line_starts_.begin(), line_starts_.end(), begin);
        const auto line = static_cast<std::size_t>(next_line - line_starts_.begin());
        const std::size_t line_start = *std::prev(next_line);
        std::size_t line_end = next_line == line_starts_.end() ? text_.size() : *next_line - 1;
        if (line_end > line_start && text_[line_end - 1] == '\r')
            --line_end;
        if (end > line_end)
            end = std::max(line_end, begin + 1);
        return SourceLocation{file_, static_cast<std::uint32_t>(line),
                              static_cast<std::uint32_t>(begin - line_start + 1),
                              static_cast<std::uint32_t>(end - begin)};
    }

    SourceLocation locate(const antlr4::Token& token) const { return locate(begin(token), end(token)); }
    SourceLocation locate(const antlr4::Token& first, const antlr4::Token& last) const
    {
        return locate(begin(first), end(last));
    }

    std::string_view text(const antlr4::Token& token) const
    {
        return text_.substr(begin(token), end(token) - begin(token));
    }
    std::string_view text(const antlr4::Token& first, const antlr4::Token& last) const
    {
        return text_.substr(begin(first), end(last) - begin(first));
    }

private:
    FileId file_;
    std::string_view text_;
    std::size_t skipped_;
    std::vector<std::size_t> line_starts_;
    // (first code point after a multi-byte character, extra bytes up to there), ascending.
    std::vector<std::pair<std::size_t, std::size_t>> wide_;
};

struct SyntaxProblem {
    std::size_t offset; // orders the problems: lexical ones are found after the parser's
    SourceLocation loc;
    std::string message;
    std::vector<std::string> hints;
};

// IntervalSet::contains is overloaded for size_t and ssize_t, which makes token enums ambiguous.
bool has(const antlr4::misc::IntervalSet& set, std::size_t type)
{
    return set.contains(type);
}

bool is_set(const antlr4::misc::IntervalSet& set, std::initializer_list<std::size_t> types)
{
    return set.size() == types.size() &&
           std::all_of(types.begin(), types.end(), [&](std::size_t t) { return has(set, t); });
}

std::string quote_token(std::string_view text)
{
    if (text.size() <= kMaxQuotedBytes)
        return fmt::format("`{}`", text);
    // Cut at a character boundary so that the message stays valid UTF-8.
    std::size_t cut = kMaxQuotedBytes;
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xc0) == 0x80)
        --cut;
    return fmt::format("`{}...`", text.substr(0, cut));
}

// The n-th token before `token` that the parser saw: comments are in the stream too, on the
// hidden channel, and must not count as the previous token (`default # why` then `}`).
const antlr4::Token* visible_before(antlr4::Parser& parser, const antlr4::Token& token, std::size_t n)
{
    auto* stream = parser.getTokenStream();
    for (auto index = token.getTokenIndex(); index > 0;) {
        const antlr4::Token* t = stream->get(--index);
        if (t->getChannel() == antlr4::Token::DEFAULT_CHANNEL && --n == 0)
            return t;
    }
    return nullptr;
}

bool is_access(std::size_t type)
{
    switch (type) {
    case BwpParser::READ: case BwpParser::WRITE: case BwpParser::APPEND: case BwpParser::EXEC:
    case BwpParser::CREATE: case BwpParser::DELETE: case BwpParser::RENAME: case BwpParser::LINK:
    case BwpParser::METADATA: case BwpParser::STAT: case BwpParser::ATTR: case BwpParser::IOCTL:
    case BwpParser::ALL:
        return true;
    default:
        return false;
    }
}

// A keyword's literal is its spelling in quotes: `'policy'`.
bool is_keyword(std::size_t type, const antlr4::dfa::Vocabulary& vocabulary)
{
    const auto literal = vocabulary.getLiteralName(type);
    return literal.size() >= 3 && literal.front() == '\'' &&
           std::isalpha(static_cast<unsigned char>(literal[1])) != 0;
}

// What the parser wanted, in words. Large sets are named by what they start.
std::string describe_expected(const antlr4::misc::IntervalSet& expected,
                              const antlr4::dfa::Vocabulary& vocabulary)
{
    // Where a name may stand, every keyword may too (`word` takes them): the set is "a name",
    // not the statements its keywords would start.
    const bool takes_names = has(expected, BwpParser::WORD);
    if (!takes_names && has(expected, BwpParser::ALLOW) && has(expected, BwpParser::LET))
        return has(expected, BwpParser::RBRACE) ? "a statement or `}`" : "a statement";
    std::vector<std::string> names;
    if (takes_names)
        names.emplace_back("a name");
    bool accesses = false;
    auto types = expected.toList();
    // Token::EOF sorts first as -1, but reads better last.
    std::rotate(types.begin(), std::upper_bound(types.begin(), types.end(), -1), types.end());
    for (const auto signed_type : types) {
        const auto type = static_cast<std::size_t>(signed_type);
        if (takes_names && (type == BwpParser::WORD || is_keyword(type, vocabulary)))
            continue;
        if (is_access(type)) {
            if (!std::exchange(accesses, true))
                names.emplace_back("an access (`read`, `write`, `exec`, ..., `all`)");
            continue;
        }
        switch (type) {
        case BwpParser::EOF: names.emplace_back("end of file"); break;
        case BwpParser::STRING: names.emplace_back("a string"); break;
        case BwpParser::PATH: names.emplace_back("a path"); break;
        case BwpParser::WORD: names.emplace_back("a name"); break;
        case BwpParser::GROUP: names.emplace_back("a `@group`"); break;
        case BwpParser::SETREF: names.emplace_back("a `$set`"); break;
        default: {
            // Keywords and punctuation: the literal, in backticks.
            auto literal = vocabulary.getLiteralName(type);
            if (literal.size() >= 2 && literal.front() == '\'')
                literal = literal.substr(1, literal.size() - 2);
            names.push_back(fmt::format("`{}`", literal));
        }
        }
    }
    std::string out;
    for (std::size_t i = 0; i < names.size(); ++i)
        out += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
    return out;
}

// Receives ANTLR's error reports and words them for this grammar: ANTLR's own messages
// ("mismatched input 'x' expecting {...}") name token types, not what the user should write.
class SyntaxErrorListener final : public antlr4::BaseErrorListener {
public:
    SyntaxErrorListener(const TextIndex& index, std::vector<SyntaxProblem>& problems)
        : index_(index), problems_(problems)
    {
    }

    void syntaxError(antlr4::Recognizer* recognizer, antlr4::Token* offending, std::size_t /*line*/,
                     std::size_t /*column*/, const std::string& /*message*/,
                     std::exception_ptr /*error*/) override
    {
        if (auto* parser = dynamic_cast<antlr4::Parser*>(recognizer)) {
            // The lexical scan reports these better than the parser could.
            if (offending->getType() == BwpLexer::UNTERMINATED_STRING)
                return;
            problems_.push_back(explain(*parser, *offending));
            // The tree is never walked after an error; not building it saves memory on garbage.
            parser->setBuildParseTree(false);
        } else {
            // The grammar gives every character a token, so this only guards against its changes.
            const auto& lexer = dynamic_cast<const antlr4::Lexer&>(*recognizer);
            const auto offset = index_.byte_offset(lexer.tokenStartCharIndex);
            problems_.push_back({offset, index_.locate(offset, offset + 1), "unexpected character", {}});
        }
        if (problems_.size() >= kMaxSyntaxErrors)
            throw antlr4::ParseCancellationException("too many syntax errors");
    }

private:
    SyntaxProblem explain(antlr4::Parser& parser, const antlr4::Token& found) const
    {
        const auto expected = parser.getExpectedTokens();
        const antlr4::Token* previous = visible_before(parser, found, 1);
        const bool at_eof = found.getType() == antlr4::Token::EOF;
        const std::string_view text = at_eof ? std::string_view{} : index_.text(found);
        const std::string what = at_eof ? "end of file" : quote_token(text);

        SyntaxProblem problem;
        if (at_eof) {
            // Point just after the last token rather than at a blank line.
            problem.offset = previous ? index_.end(*previous) : index_.begin(found);
            problem.loc = index_.locate(problem.offset, problem.offset + 1);
        } else {
            problem.offset = index_.begin(found);
            problem.loc = index_.locate(found);
        }

        auto& hints = problem.hints;
        const auto previous_type = previous ? previous->getType() : antlr4::Token::INVALID_TYPE;
        const bool after_action = previous_type == BwpParser::ALLOW || previous_type == BwpParser::DENY ||
                                  previous_type == BwpParser::AUDIT;
        if (has(expected, BwpParser::READ) && after_action &&
            (found.getType() == BwpParser::PATH || found.getType() == BwpParser::STRING)) {
            problem.message = fmt::format("expected the accesses to {} before the path, found {}",
                                          index_.text(*previous), what);
            hints.push_back(fmt::format("name them, e.g. `{} read, exec {}`, or `{} all {}`", index_.text(*previous),
                                        text, index_.text(*previous), text));
        } else if (has(expected, BwpParser::PATH) && has(expected, BwpParser::STRING) &&
                   !has(expected, BwpParser::READ)) {
            problem.message = fmt::format("expected a path after `{}`, found {}", index_.text(*previous), what);
            if (found.getType() == BwpParser::WORD && text.starts_with('~'))
                hints.emplace_back("`~` is not expanded; write `${HOME}` or the absolute path");
            else if (found.getType() == BwpParser::WORD)
                hints.push_back(fmt::format("an unquoted path starts with `/`: did you mean {}?",
                                            quote_token(fmt::format("/{}", text))));
        } else if (previous_type == BwpParser::DEFAULT && has(expected, BwpParser::ALLOW)) {
            problem.message = fmt::format("expected `allow` or `deny` after `default`, found {}", what);
            hints.emplace_back("write `default allow` or `default deny`");
        } else if (is_set(expected, {BwpParser::STRING}) && previous_type == BwpParser::POLICY) {
            problem.message = fmt::format("expected a quoted policy name after `policy`, found {}", what);
            if (found.getType() == BwpParser::WORD)
                hints.push_back(fmt::format("quote the name: `policy \"{}\"`", text));
        } else if (is_set(expected, {BwpParser::LBRACE}) && previous_type == BwpParser::STRING) {
            problem.message = fmt::format("expected `{{` after the policy name, found {}", what);
        } else if (has(expected, BwpParser::RBRACE) && has(expected, BwpParser::LET) &&
                   !has(expected, BwpParser::WORD) && (at_eof || found.getType() == BwpParser::POLICY)) {
            problem.message = fmt::format("expected `}}` to close the block opened on line {}, found {}",
                                          block_line(parser), what);
        } else {
            problem.message =
                fmt::format("expected {}, found {}", describe_expected(expected, parser.getVocabulary()), what);
            hints = unexpected_token_hints(parser, found, expected);
        }

        const bool word = found.getType() == BwpParser::WORD;
        if (word && text.find(';') != std::string_view::npos)
            hints.assign({"statements need no `;`: remove it"});
        if (word && (text.starts_with("allow/") || text.starts_with("deny/")))
            hints.emplace_back("put a space between the action and the path");
        return problem;
    }

    // Hints for a token that cannot start a statement or a policy.
    std::vector<std::string> unexpected_token_hints(antlr4::Parser& parser, const antlr4::Token& found,
                                                    const antlr4::misc::IntervalSet& expected) const
    {
        const auto is_pattern = [](const antlr4::Token* t) {
            return t && (t->getType() == BwpParser::PATH || t->getType() == BwpParser::STRING);
        };
        const auto back = [&](std::size_t n) { return visible_before(parser, found, n); };
        const auto* previous = back(1);
        const auto* keyword = back(2);
        // Where a name may stand, keywords are names: `policy` or `allow` there start nothing.
        const bool takes_names = has(expected, BwpParser::WORD);
        if (!takes_names && has(expected, BwpParser::ALLOW) && has(expected, BwpParser::LET)) {
            // `default` alone on its line, then `allow read /x`: the parser read `default allow`.
            if (keyword && keyword->getType() == BwpParser::DEFAULT &&
                keyword->getLine() != previous->getLine() && previous->getLine() == found.getLine())
                return {fmt::format("`default` on line {} took `{}` as its action: write "
                                    "`default allow` or `default deny`",
                                    index_.locate(*keyword).line, index_.text(*previous))};
            if (!is_pattern(&found))
                return {};
            if (is_pattern(previous) && previous->getLine() == found.getLine())
                return {"a rule names one path: write one rule per path, or a `set` of paths"};
            return {"start the rule with `allow`, `deny` or `audit` and its accesses: `allow read /path`"};
        }
        if (takes_names || !has(expected, BwpParser::POLICY))
            return {};
        // After an error, the matching `{` may be one that the parser skipped.
        if (found.getType() == BwpParser::RBRACE)
            return problems_.empty() ? std::vector<std::string>{"this `}` has no matching `{`"}
                                     : std::vector<std::string>{};
        return {"a file holds `policy \"name\" { ... }` blocks"};
    }

    // The line of the innermost `policy` or `when` block being parsed.
    std::uint32_t block_line(antlr4::Parser& parser) const
    {
        for (antlr4::tree::ParseTree* node = parser.getContext(); node; node = node->parent) {
            if (dynamic_cast<BwpParser::PolicyContext*>(node) || dynamic_cast<BwpParser::WhenBlockContext*>(node))
                return index_.locate(*dynamic_cast<antlr4::ParserRuleContext*>(node)->getStart()).line;
        }
        return 0;
    }

    const TextIndex& index_;
    std::vector<SyntaxProblem>& problems_;
};

// ANTLR's recovery, with two changes.
class BwpErrorStrategy final : public antlr4::DefaultErrorStrategy {
protected:
    // ANTLR's own messages are discarded, and quoting the token in them would copy it whole
    // (garbage input can be one 10 MB token).
    std::string getTokenErrorDisplay(antlr4::Token* /*token*/) override { return {}; }

    // Single-token deletion skips a bad token when the next one fits. Inside a statement that
    // next token may be on a later line and belong to the next statement (`default deny;` then
    // `allow /a` would become `default allow` and a stray `/a`), so there it stays in the line.
    antlr4::Token* singleTokenDeletion(antlr4::Parser* parser) override
    {
        const auto rule = parser->getContext()->getRuleIndex();
        const bool in_statement = rule != BwpParser::RuleFile && rule != BwpParser::RulePolicy &&
                                  rule != BwpParser::RuleStatement && rule != BwpParser::RuleWhenBlock;
        auto* tokens = parser->getTokenStream();
        if (in_statement && tokens->LT(2)->getLine() != tokens->LT(-1)->getLine())
            return nullptr;
        return DefaultErrorStrategy::singleTokenDeletion(parser);
    }
};

// Thrown out of the parser at a `when` block nested past kMaxWhenDepth.
struct WhenTooDeep {
    const antlr4::Token* when;
};

// BwpParser that refuses `when` blocks nested past kMaxWhenDepth before recursing any further.
class DepthLimitedParser final : public BwpParser {
public:
    using BwpParser::BwpParser;

    void enterRule(antlr4::ParserRuleContext* ctx, std::size_t state, std::size_t rule) override
    {
        BwpParser::enterRule(ctx, state, rule);
        if (rule != BwpParser::RuleWhenBlock)
            return;
        // The contexts being parsed link to their callers even when no tree is built.
        std::size_t depth = 0;
        for (antlr4::RuleContext* node = ctx; node != nullptr;
             node = dynamic_cast<antlr4::RuleContext*>(node->parent))
            depth += node->getRuleIndex() == BwpParser::RuleWhenBlock ? 1 : 0;
        if (depth > kMaxWhenDepth)
            throw WhenTooDeep{ctx->getStart()};
    }
};

// Converts an error-free parse tree; string escapes are the only errors left to find.
class AstBuilder {
public:
    AstBuilder(const TextIndex& index, Diagnostics& diags) : index_(index), diags_(diags) {}

    ast::Module build(FileId file, BwpParser::FileContext& tree)
    {
        ast::Module module{file, {}};
        for (auto* policy : tree.policy())
            module.policies.push_back(build_policy(*policy));
        return module;
    }

private:
    ast::Policy build_policy(BwpParser::PolicyContext& ctx)
    {
        ast::Policy policy;
        policy.name = string_value(*ctx.name);
        policy.loc = index_.locate(*ctx.POLICY()->getSymbol());
        policy.name_loc = index_.locate(*ctx.name);
        policy.body = statements(ctx.statement());
        return policy;
    }

    std::vector<ast::Statement> statements(const std::vector<BwpParser::StatementContext*>& list)
    {
        std::vector<ast::Statement> out;
        out.reserve(list.size());
        for (auto* s : list)
            out.push_back(ast::Statement{statement(*s)});
        return out;
    }

    decltype(ast::Statement::node) statement(BwpParser::StatementContext& ctx)
    {
        if (auto* m = ctx.metadata()) {
            const auto key = m->key->getType() == BwpParser::DESCRIPTION ? ast::Metadata::Key::Description
                                                                         : ast::Metadata::Key::Version;
            return ast::Metadata{key, text(*m->value), span(*m)};
        }
        if (auto* r = ctx.requiresStmt()) {
            const auto what = r->what->getType() == BwpParser::KERNEL ? ast::Requires::What::Kernel
                                                                      : ast::Requires::What::Feature;
            return ast::Requires{what, word(*r->word()), span(*r)};
        }
        if (auto* i = ctx.includeStmt())
            return ast::Include{text(*i->target), span(*i)};
        if (auto* l = ctx.letStmt())
            return ast::Let{word(*l->name), text(*l->value), span(*l)};
        if (auto* d = ctx.setStmt()) {
            ast::SetDef set{d->kind->getType() == BwpParser::PATHS ? ast::SetDef::Kind::Paths
                                                                   : ast::SetDef::Kind::Syscalls,
                            word(*d->name), {}, span(*d)};
            for (auto* item : d->item())
                set.items.push_back(build_item(*item));
            return set;
        }
        if (auto* d = ctx.defaultStmt()) {
            auto scope = ast::DefaultStmt::Scope::Paths;
            if (d->scope != nullptr)
                scope = d->scope->getType() == BwpParser::NET ? ast::DefaultStmt::Scope::Net
                                                              : ast::DefaultStmt::Scope::Syscalls;
            return ast::DefaultStmt{scope, action(*d->action()), syscall_action(d->syscallAction()), span(*d),
                                    written(*d)};
        }
        if (auto* r = ctx.pathRule()) {
            ast::PathRule rule{action(*r->action()), accesses(*r->accessList()), std::nullopt,
                               target(*r->target), {}, span(*r), written(*r)};
            if (r->OWNER() != nullptr)
                rule.owner = index_.locate(*r->OWNER()->getSymbol());
            if (auto* f = r->flagsClause())
                rule.flags = words(f->word());
            return rule;
        }
        if (auto* r = ctx.syscallRule()) {
            ast::SyscallRule rule{action(*r->action()), {}, syscall_action(r->syscallAction()), span(*r),
                                  written(*r)};
            for (auto* item : r->item())
                rule.items.push_back(build_item(*item));
            return rule;
        }
        if (auto* r = ctx.netRule())
            return net_rule(*r);
        if (auto* r = ctx.deviceRule())
            return device_rule(*r);
        if (auto* u = ctx.unsafeStmt())
            return ast::Unsafe{words(u->word()), span(*u)};
        return when_block(*ctx.whenBlock());
    }

    ast::NetRule net_rule(BwpParser::NetRuleContext& r)
    {
        auto& t = *r.netTarget();
        ast::NetRule rule{ast::NetRule::Kind::All, action(*r.action()), {}, std::nullopt, std::nullopt, {}, span(r),
                          written(r)};
        if (t.FAMILY() != nullptr) {
            rule.kind = ast::NetRule::Kind::Family;
            rule.families = words(t.word());
        } else if (t.proto != nullptr) {
            rule.kind = ast::NetRule::Kind::Endpoint;
            rule.protocol = token_word(*t.proto);
            rule.direction = token_word(*t.direction);
            rule.endpoints = words(t.word());
        }
        return rule;
    }

    ast::DeviceRule device_rule(BwpParser::DeviceRuleContext& r)
    {
        ast::DeviceRule rule{action(*r.action()), accesses(*r.accessList()), ast::Text{}, std::nullopt, false, {},
                             span(r), written(r)};
        auto& t = *r.deviceTarget();
        if (t.kind != nullptr)
            rule.target = ast::DeviceNumber{token_word(*t.kind), word(*t.word())};
        else
            std::visit([&](auto&& v) { rule.target = std::move(v); }, target(*t.getStart()));
        if (auto* io = r.ioctlClause()) {
            rule.ioctl = index_.locate(*io->IOCTL()->getSymbol());
            rule.ioctl_any = io->ANY() != nullptr;
            rule.ioctl_commands = words(io->word());
        }
        return rule;
    }

    ast::WhenBlock when_block(BwpParser::WhenBlockContext& w)
    {
        ast::WhenBlock block{{}, statements(w.statement()), index_.locate(*w.WHEN()->getSymbol(), *w.LBRACE()->getSymbol())};
        for (auto* c : w.condition()) {
            ast::Condition cond{ast::Condition::Kind::Exe, {}, {}, span(*c)};
            if (c->EXE() != nullptr) {
                cond.exe = text(*c->getStop());
            } else {
                cond.kind = c->UID() != nullptr ? ast::Condition::Kind::Uid : ast::Condition::Kind::Gid;
                cond.id = word(*c->word());
            }
            block.conditions.push_back(std::move(cond));
        }
        return block;
    }

    ast::Item build_item(BwpParser::ItemContext& ctx)
    {
        const auto& token = *ctx.getStart();
        const auto loc = index_.locate(token);
        switch (token.getType()) {
        case BwpParser::STRING: return {ast::Item::Kind::Pattern, string_value(token), loc, true};
        case BwpParser::PATH: return {ast::Item::Kind::Pattern, std::string(index_.text(token)), loc, false};
        case BwpParser::GROUP: return {ast::Item::Kind::Group, std::string(index_.text(token).substr(1)), loc, false};
        case BwpParser::SETREF: return {ast::Item::Kind::SetRef, std::string(index_.text(token).substr(1)), loc, false};
        default: return {ast::Item::Kind::Word, std::string(index_.text(token)), loc, false};
        }
    }

    std::optional<ast::SyscallAction> syscall_action(BwpParser::SyscallActionContext* ctx)
    {
        if (ctx == nullptr)
            return std::nullopt;
        if (ctx->KILL() != nullptr)
            return ast::SyscallAction{ast::SyscallAction::Kind::Kill, std::nullopt, span(*ctx)};
        return ast::SyscallAction{ast::SyscallAction::Kind::Errno, word(*ctx->word()), span(*ctx)};
    }

    std::vector<ast::AccessName> accesses(BwpParser::AccessListContext& ctx)
    {
        std::vector<ast::AccessName> out;
        for (auto* a : ctx.access())
            out.push_back({std::string(index_.text(*a->getStart())), index_.locate(*a->getStart())});
        return out;
    }

    ast::PathTarget target(const antlr4::Token& token)
    {
        if (token.getType() == BwpParser::SETREF)
            return ast::SetRef{std::string(index_.text(token).substr(1)), index_.locate(token)};
        return text(token);
    }

    ast::Text text(const antlr4::Token& token)
    {
        if (token.getType() == BwpParser::STRING)
            return {string_value(token), index_.locate(token), true};
        return {std::string(index_.text(token)), index_.locate(token), false};
    }

    ast::Word word(BwpParser::WordContext& ctx) { return token_word(*ctx.getStart()); }
    ast::Word token_word(const antlr4::Token& token)
    {
        return {std::string(index_.text(token)), index_.locate(token)};
    }
    std::vector<ast::Word> words(const std::vector<BwpParser::WordContext*>& list)
    {
        std::vector<ast::Word> out;
        for (auto* w : list)
            out.push_back(word(*w));
        return out;
    }

    SourceLocation span(antlr4::ParserRuleContext& ctx) const
    {
        return index_.locate(*ctx.getStart(), *ctx.getStop());
    }

    // A rule as written, on one line, as denials and dumps name it: a rule continued over
    // lines reads as it would on one (each line break, with the blanks and any comment
    // before it, becomes one space), so that `bwc fmt` does not change its name.
    std::string written(antlr4::ParserRuleContext& ctx) const
    {
        const auto raw = index_.text(*ctx.getStart(), *ctx.getStop());
        std::string out;
        bool quoted = false; // strings stay on one line and may hold `#`
        for (std::size_t i = 0; i < raw.size(); ++i) {
            const char c = raw[i];
            if (quoted || c == '"') {
                out += c;
                if (quoted && c == '\\' && i + 1 < raw.size())
                    out += raw[++i];
                else if (c == '"')
                    quoted = !quoted;
            } else if (c == '#') {
                i = std::min(raw.find('\n', i), raw.size()) - 1;
            } else if (c == '\r' || c == '\n') {
                while (!out.empty() && (out.back() == ' ' || out.back() == '\t'))
                    out.pop_back();
                while (i + 1 < raw.size() && std::string_view(" \t\r\n").find(raw[i + 1]) != std::string_view::npos)
                    ++i;
                out += ' ';
            } else {
                out += c;
            }
        }
        return out;
    }

    static ast::Action action(BwpParser::ActionContext& ctx)
    {
        if (ctx.ALLOW() != nullptr)
            return ast::Action::Allow;
        return ctx.DENY() != nullptr ? ast::Action::Deny : ast::Action::Audit;
    }

    // The contents of a quoted string with its escapes resolved.
    std::string string_value(const antlr4::Token& token)
    {
        const auto quoted = index_.text(token);
        const auto contents = quoted.substr(1, quoted.size() - 2);
        std::string out;
        out.reserve(contents.size());
        for (std::size_t i = 0; i < contents.size(); ++i) {
            if (contents[i] != '\\') {
                out += contents[i];
                continue;
            }
            // The lexer guarantees a character after every backslash inside a string.
            const char c = contents[++i];
            switch (c) {
            case '"': out += '"'; break;
            case '\\': out += '\\'; break;
            case 'n': out += '\n'; break;
            case 't': out += '\t'; break;
            default: {
                // Name the whole character, which may take several bytes.
                const auto length = std::max<std::size_t>(utf8_sequence_length(contents.substr(i)), 1);
                // The contents start one byte into the token, and `i` is one past the backslash.
                const auto backslash = index_.begin(token) + i;
                diags_
                    .report(DiagKind::BadStringEscape, index_.locate(backslash, backslash + 1 + length),
                            contents.substr(i, length))
                    .hints.emplace_back(R"(strings know the escapes `\"`, `\\`, `\n` and `\t`)");
                out += contents.substr(i, length);
                i += length - 1;
            }
            }
        }
        return out;
    }

    const TextIndex& index_;
    Diagnostics& diags_;
};

void report_syntax_problems(std::vector<SyntaxProblem>& problems, bool stopped, Diagnostics& diags)
{
    std::stable_sort(problems.begin(), problems.end(),
                     [](const auto& a, const auto& b) { return a.offset < b.offset; });
    const bool truncated = stopped || problems.size() > kMaxSyntaxErrors;
    problems.resize(std::min(problems.size(), kMaxSyntaxErrors));
    Diagnostic* last = nullptr;
    for (auto& problem : problems) {
        last = &diags.report(DiagKind::SyntaxError, problem.loc, problem.message);
        last->hints = std::move(problem.hints);
    }
    if (truncated && last)
        last->hints.push_back(fmt::format("stopped after {} syntax errors", kMaxSyntaxErrors));
}

// The whole parse: the encoding check, then ANTLR with our error reporting. Only when nothing
// was reported does `use(index, tokens, tree)` make the result, so that run_parse and run_lex
// report the same errors.
template <typename Result, typename Use>
std::optional<Result> parse_file(const SourceFile& file, Diagnostics& diags, Use use)
{
    const std::string_view text = file.text;
    if (const auto bad = find_encoding_error(text)) {
        // Only the index's lines are used, and they do not depend on the encoding.
        const TextIndex lines(file, 0);
        auto& d = diags.report(DiagKind::InvalidEncoding, lines.locate(bad->offset, bad->offset + 1),
                               bad->message);
        if (text[bad->offset] != '\0')
            d.hints.emplace_back("policy files are UTF-8");
        return std::nullopt;
    }

    try {
        antlr4::ANTLRInputStream input(text.data(), text.size());
        // The 4.9 runtime drops a leading BOM (not every version does); positions start after it.
        const auto code_points = static_cast<std::size_t>(std::count_if(
            text.begin(), text.end(), [](unsigned char c) { return (c & 0xc0) != 0x80; }));
        const TextIndex index(file, input.size() < code_points ? kUtf8Bom.size() : 0);

        BwpLexer lexer(&input);
        antlr4::CommonTokenStream tokens(&lexer);
        DepthLimitedParser parser(&tokens);
        std::vector<SyntaxProblem> problems;
        SyntaxErrorListener listener(index, problems);
        lexer.removeErrorListeners();
        lexer.addErrorListener(&listener);
        parser.removeErrorListeners();
        parser.addErrorListener(&listener);
        parser.setErrorHandler(std::make_shared<BwpErrorStrategy>());

        BwpParser::FileContext* tree = nullptr;
        bool stopped = false;
        try {
            tree = parser.file();
        } catch (const antlr4::ParseCancellationException&) {
            stopped = true;
        } catch (const WhenTooDeep& deep) {
            const auto offset = index.begin(*deep.when);
            problems.push_back({offset, index.locate(*deep.when),
                                fmt::format("`when` blocks are nested more than {} deep", kMaxWhenDepth),
                                {"one `when` can test several conditions: `when uid 1000 and gid 100 { ... }`"}});
        }
        for (auto* token : tokens.getTokens()) {
            if (token->getType() == BwpLexer::UNTERMINATED_STRING) {
                const auto offset = index.begin(*token);
                problems.push_back({offset, index.locate(*token), "unterminated string",
                                    {"close it with `\"` on the same line; strings cannot span lines"}});
            }
        }
        if (!problems.empty() || parser.getNumberOfSyntaxErrors() != 0) {
            report_syntax_problems(problems, stopped, diags);
            return std::nullopt;
        }
        return use(index, tokens, *tree);
    } catch (const std::exception& e) {
        // ANTLR gets valid UTF-8 only, so this is a bug or an allocation failure; the caller
        // still gets a diagnostic rather than an exception.
        diags.report(DiagKind::SyntaxError, SourceLocation{file.id, 1, 1, 0},
                     fmt::format("internal parser error: {}", e.what()));
        return std::nullopt;
    }
}

} // namespace

std::optional<ast::Module> run_parse(const SourceFile& file, Diagnostics& diags)
{
    return parse_file<ast::Module>(
        file, diags,
        [&](const TextIndex& index, antlr4::CommonTokenStream&,
            BwpParser::FileContext& tree) -> std::optional<ast::Module> {
            const auto errors_before = diags.error_count();
            auto module = AstBuilder(index, diags).build(file.id, tree);
            if (diags.error_count() != errors_before)
                return std::nullopt;
            return module;
        });
}

namespace {

LexToken::Kind lex_kind(const antlr4::Token& token, std::string_view text)
{
    switch (token.getType()) {
    case BwpLexer::STRING: return LexToken::Kind::String;
    case BwpLexer::PATH: return LexToken::Kind::Path;
    case BwpLexer::GROUP: return LexToken::Kind::Group;
    case BwpLexer::SETREF: return LexToken::Kind::SetRef;
    case BwpLexer::COMMENT: return LexToken::Kind::Comment;
    case BwpLexer::WORD: return LexToken::Kind::Word;
    default:
        // Every other token is a literal (`policy`, `{`): told apart by their first character,
        // keywords and punctuation need no list that the grammar could outgrow.
        return std::isalpha(static_cast<unsigned char>(text.front())) != 0 ? LexToken::Kind::Keyword
                                                                           : LexToken::Kind::Punct;
    }
}

void mark_statements(const std::vector<BwpParser::StatementContext*>& statements, std::vector<bool>& starts)
{
    for (auto* s : statements) {
        starts[s->getStart()->getTokenIndex()] = true;
        if (auto* w = s->whenBlock())
            mark_statements(w->statement(), starts);
    }
}

} // namespace

std::optional<std::vector<LexToken>> run_lex(const SourceFile& file, Diagnostics& diags)
{
    return parse_file<std::vector<LexToken>>(
        file, diags,
        [](const TextIndex& index, antlr4::CommonTokenStream& tokens, BwpParser::FileContext& tree) {
            const auto& all = tokens.getTokens();
            std::vector<bool> starts(all.size());
            for (auto* policy : tree.policy()) {
                starts[policy->getStart()->getTokenIndex()] = true;
                mark_statements(policy->statement(), starts);
            }
            std::vector<LexToken> out;
            out.reserve(all.size());
            for (auto* token : all) {
                if (token->getType() == antlr4::Token::EOF)
                    continue;
                const auto text = index.text(*token);
                const auto loc = index.locate(*token);
                out.push_back({lex_kind(*token, text), text, loc.line, loc.column, starts[token->getTokenIndex()]});
            }
            return std::optional(std::move(out));
        });
}

} // namespace bw
