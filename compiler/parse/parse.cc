// The parse stage: checks the encoding, runs the ANTLR parser with our own error reporting and
// converts an error-free parse tree into ast::Module. No ANTLR type leaves this file.
#include "parse/parse.h"

// After parse.h on purpose: the ANTLR headers #undef the EOF macro of <cstdio>, which its
// include guard then keeps from coming back.
#include <BwpLexer.h>
#include <BwpParser.h>

#include <algorithm>
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

std::string describe_expected(const antlr4::misc::IntervalSet& expected,
                              const antlr4::dfa::Vocabulary& vocabulary)
{
    std::vector<std::string> names;
    auto types = expected.toList();
    // Token::EOF sorts first as -1, but reads better last.
    std::rotate(types.begin(), std::upper_bound(types.begin(), types.end(), -1), types.end());
    for (const auto signed_type : types) {
        const auto type = static_cast<std::size_t>(signed_type);
        switch (type) {
        case BwpParser::EOF: names.emplace_back("end of file"); break;
        case BwpParser::POLICY: names.emplace_back("`policy`"); break;
        case BwpParser::DEFAULT: names.emplace_back("`default`"); break;
        case BwpParser::ALLOW: names.emplace_back("`allow`"); break;
        case BwpParser::DENY: names.emplace_back("`deny`"); break;
        case BwpParser::LBRACE: names.emplace_back("`{`"); break;
        case BwpParser::RBRACE: names.emplace_back("`}`"); break;
        case BwpParser::STRING: names.emplace_back("a string"); break;
        case BwpParser::PATH: names.emplace_back("a path"); break;
        default: names.push_back(vocabulary.getDisplayName(type)); break;
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
        const auto index = found.getTokenIndex();
        const antlr4::Token* previous = index > 0 ? parser.getTokenStream()->get(index - 1) : nullptr;
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
        if (is_set(expected, {BwpParser::PATH, BwpParser::STRING})) {
            problem.message =
                fmt::format("expected a path after `{}`, found {}", index_.text(*previous), what);
            if (found.getType() == BwpParser::WORD && text.starts_with('~'))
                hints.emplace_back("`~` is not expanded; write the absolute path");
            else if (found.getType() == BwpParser::WORD)
                hints.push_back(fmt::format("an unquoted path starts with `/`: did you mean {}?",
                                            quote_token(fmt::format("/{}", text))));
        } else if (is_set(expected, {BwpParser::ALLOW, BwpParser::DENY})) {
            problem.message = fmt::format("expected `allow` or `deny` after `default`, found {}", what);
            hints.emplace_back("write `default allow` or `default deny`");
        } else if (is_set(expected, {BwpParser::STRING})) {
            problem.message =
                fmt::format("expected a quoted policy name after `policy`, found {}", what);
            if (found.getType() == BwpParser::WORD)
                hints.push_back(fmt::format("quote the name: `policy \"{}\"`", text));
        } else if (is_set(expected, {BwpParser::LBRACE})) {
            problem.message = fmt::format("expected `{{` after the policy name, found {}", what);
        } else if (has(expected, BwpParser::RBRACE) &&
                   (at_eof || found.getType() == BwpParser::POLICY)) {
            problem.message =
                fmt::format("expected `}}` to close the policy opened on line {}, found {}",
                            policy_line(parser), what);
        } else {
            problem.message = fmt::format("expected {}, found {}",
                                          describe_expected(expected, parser.getVocabulary()), what);
            hints = unexpected_token_hints(parser, found, expected);
        }

        const bool word = found.getType() == BwpParser::WORD;
        if (word && text.find(';') != std::string_view::npos)
            hints.assign({"statements need no `;`: remove it"});
        if (word && (text.starts_with("allow/") || text.starts_with("deny/")))
            hints.emplace_back("put a space between the action and the path");
        if (has(expected, BwpParser::RBRACE) && previous && previous->getType() == BwpParser::PATH &&
            index_.text(*previous).ends_with('}'))
            hints.emplace_back("a `}` right after a path is part of the path: put a space before "
                               "the `}` that closes the policy");
        return problem;
    }

    // Hints for a token that cannot start a statement or a policy.
    std::vector<std::string> unexpected_token_hints(antlr4::Parser& parser, const antlr4::Token& found,
                                                    const antlr4::misc::IntervalSet& expected) const
    {
        const auto is_pattern = [](const antlr4::Token* t) {
            return t && (t->getType() == BwpParser::PATH || t->getType() == BwpParser::STRING);
        };
        const auto back = [&](std::size_t n) {
            const auto index = found.getTokenIndex();
            return index >= n ? parser.getTokenStream()->get(index - n) : nullptr;
        };
        const auto* previous = back(1);
        const auto* keyword = back(2);
        if (is_pattern(&found)) {
            // `default` alone on its line, then `allow /x`: the parser read `default allow`.
            if (keyword && keyword->getType() == BwpParser::DEFAULT &&
                keyword->getLine() != previous->getLine() && previous->getLine() == found.getLine())
                return {fmt::format("`default` on line {} took `{}` as its action: write "
                                    "`default allow` or `default deny`",
                                    index_.locate(*keyword).line, index_.text(*previous))};
            if (is_pattern(previous) && previous->getLine() == found.getLine())
                return {"a rule is `allow PATH` or `deny PATH`, with one path per rule"};
            return {"start the rule with `allow` or `deny`"};
        }
        if (!has(expected, BwpParser::POLICY))
            return {};
        // After an error, the matching `{` may be one that the parser skipped.
        if (found.getType() == BwpParser::RBRACE)
            return problems_.empty() ? std::vector<std::string>{"this `}` has no matching `{`"}
                                     : std::vector<std::string>{};
        return {"a file holds `policy \"name\" { ... }` blocks"};
    }

    std::uint32_t policy_line(antlr4::Parser& parser) const
    {
        for (antlr4::tree::ParseTree* node = parser.getContext(); node; node = node->parent) {
            if (auto* policy = dynamic_cast<BwpParser::PolicyContext*>(node))
                return index_.locate(*policy->getStart()).line;
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
        const bool in_statement = rule == BwpParser::RuleDefaultStmt ||
                                  rule == BwpParser::RulePathRule || rule == BwpParser::RuleAction ||
                                  rule == BwpParser::RulePattern;
        auto* tokens = parser->getTokenStream();
        if (in_statement && tokens->LT(2)->getLine() != tokens->LT(-1)->getLine())
            return nullptr;
        return DefaultErrorStrategy::singleTokenDeletion(parser);
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
        for (auto* statement : ctx.statement()) {
            if (auto* stmt = statement->defaultStmt()) {
                policy.defaults.push_back(ast::DefaultStmt{
                    action(*stmt->action()),
                    index_.locate(*stmt->DEFAULT()->getSymbol(), *stmt->action()->getStart())});
            } else {
                auto& rule = *statement->pathRule();
                const auto& pattern = *rule.pattern()->getStart();
                policy.rules.push_back(ast::PathRule{
                    action(*rule.action()),
                    pattern.getType() == BwpParser::STRING ? string_value(pattern)
                                                           : std::string(index_.text(pattern)),
                    index_.locate(*rule.action()->getStart(), pattern), index_.locate(pattern)});
            }
        }
        return policy;
    }

    static ast::Action action(BwpParser::ActionContext& ctx)
    {
        return ctx.ALLOW() ? ast::Action::Allow : ast::Action::Deny;
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

} // namespace

std::optional<ast::Module> run_parse(const SourceFile& file, Diagnostics& diags)
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
        BwpParser parser(&tokens);
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

        const auto errors_before = diags.error_count();
        auto module = AstBuilder(index, diags).build(file.id, *tree);
        if (diags.error_count() != errors_before)
            return std::nullopt;
        return module;
    } catch (const std::exception& e) {
        // ANTLR gets valid UTF-8 only, so this is a bug or an allocation failure; the caller
        // still gets a diagnostic rather than an exception.
        diags.report(DiagKind::SyntaxError, SourceLocation{file.id, 1, 1, 0},
                     fmt::format("internal parser error: {}", e.what()));
        return std::nullopt;
    }
}

} // namespace bw
