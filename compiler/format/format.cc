// The formatter lays the parse stage's tokens out again. Where statements start comes from the
// parser (LexToken::starts_statement); everything else is decided token by token, so the
// output holds the input's tokens in the input's order.
#include "format/format.h"

#include "parse/parse.h"

#include <algorithm>
#include <span>
#include <string_view>

namespace bw {
namespace {

constexpr std::size_t kIndentWidth = 4;
constexpr std::size_t kMaxColumns = 100;

bool is_punct(const LexToken& token, std::string_view text)
{
    return token.kind == LexToken::Kind::Punct && token.text == text;
}

// Columns as an editor counts them: one per code point.
std::size_t columns(std::string_view text)
{
    return static_cast<std::size_t>(
        std::count_if(text.begin(), text.end(), [](unsigned char c) { return (c & 0xc0) != 0x80; }));
}

bool space_between(const LexToken& before, const LexToken& after)
{
    // `/a,` would be one path.
    if (is_punct(after, ","))
        return before.kind == LexToken::Kind::Path;
    if (is_punct(after, "(") || is_punct(after, ")") || is_punct(before, "("))
        return false;
    return !(is_punct(before, "{") && is_punct(after, "}"));
}

class Formatter {
public:
    explicit Formatter(std::span<const LexToken> tokens) : tokens_(tokens) {}

    std::string run()
    {
        for (std::size_t i = 0; i < tokens_.size(); ++i) {
            const auto& token = tokens_[i];
            if (token.kind == LexToken::Kind::Comment) {
                const bool inside = inside_statement(i);
                comment(i, inside ? depth_ + 1 : depth_, !inside);
            } else if (token.starts_statement) {
                in_set_ = token.kind == LexToken::Kind::Keyword && token.text == "set";
                begin_line(i, depth_, true);
                code(i);
            } else if (is_punct(token, "{") && in_set_) {
                i = set_body(i);
            } else if (is_punct(token, "{")) {
                code(i);
                ++depth_;
                after_open_ = true;
            } else if (is_punct(token, "}")) {
                --depth_;
                begin_line(i, depth_, false);
                code(i);
                blank_due_ = depth_ == 0;
            } else {
                code(i);
            }
        }
        if (started_) {
            out_ += line_;
            out_ += '\n';
        }
        return std::move(out_);
    }

private:
    // Whether the statement before comment `i` goes on after it, which makes the comment part
    // of the statement rather than a line between statements.
    bool inside_statement(std::size_t i)
    {
        // Cached over a run of comments, which keeps a file of comments linear.
        if (next_code_ <= i) {
            next_code_ = i + 1;
            while (next_code_ < tokens_.size() && tokens_[next_code_].kind == LexToken::Kind::Comment)
                ++next_code_;
        }
        return next_code_ < tokens_.size() && !tokens_[next_code_].starts_statement &&
               !is_punct(tokens_[next_code_], "}");
    }

    // Ends the current line and starts one for token `i`. Blank lines in the input before `i`
    // become one blank line when `may_blank` and the place allows it.
    void begin_line(std::size_t i, std::size_t indent, bool may_blank)
    {
        if (started_) {
            out_ += line_;
            out_ += '\n';
            const bool blank_in_input = tokens_[i].line > tokens_[i - 1].line + 1;
            if (!after_open_ && !is_punct(tokens_[i], "}") && (blank_due_ || (may_blank && blank_in_input)))
                out_ += '\n';
        }
        started_ = true;
        line_.assign(indent * kIndentWidth, ' ');
        indent_ = indent;
        last_ = nullptr;
        after_open_ = false;
        blank_due_ = false;
        closed_ = false;
    }

    // Appends code token `i` to the line; after a comment, the statement continues on the next.
    void code(std::size_t i)
    {
        const auto& token = tokens_[i];
        if (closed_)
            begin_line(i, depth_ + 1, false);
        if (last_ != nullptr && space_between(*last_, token))
            line_ += ' ';
        line_ += token.text;
        last_ = &token;
    }

    void comment(std::size_t i, std::size_t indent, bool may_blank)
    {
        const auto& token = tokens_[i];
        // A line already closed by a comment is one whose comma the split set moved: the
        // comment after that comma (`/a  # x` then `, # y`) gets a line of its own.
        if (started_ && !closed_ && tokens_[i - 1].line == token.line)
            line_ += "  ";
        else
            begin_line(i, indent, may_blank);
        line_ += token.text.substr(0, token.text.find_last_not_of(" \t\f\v") + 1);
        closed_ = true;
    }

    // Lays out a set's braces and items from its `{` at `open`; returns the index of its `}`.
    std::size_t set_body(std::size_t open)
    {
        std::size_t close = open + 1;
        while (!is_punct(tokens_[close], "}"))
            ++close;
        code(open);
        const auto items = tokens_.subspan(open + 1, close - open - 1);
        const bool has_comment = std::any_of(items.begin(), items.end(),
                                             [](const LexToken& t) { return t.kind == LexToken::Kind::Comment; });
        if (!has_comment) {
            std::string rest;
            const LexToken* before = &tokens_[open];
            for (std::size_t k = open + 1; k <= close; ++k) {
                const auto& token = tokens_[k];
                // The trailing comma is for the one-item-per-line form.
                if (is_punct(token, ",") && k + 1 == close)
                    continue;
                if (space_between(*before, token))
                    rest += ' ';
                rest += token.text;
                before = &token;
            }
            if (columns(line_) + columns(rest) <= kMaxColumns) {
                line_ += rest;
                last_ = &tokens_[close];
                return close;
            }
        }
        const auto indent = indent_;
        after_open_ = true;
        for (std::size_t k = open + 1; k < close; ++k) {
            const auto& token = tokens_[k];
            if (token.kind == LexToken::Kind::Comment) {
                comment(k, indent + 1, true);
            } else if (!is_punct(token, ",")) {
                begin_line(k, indent + 1, true);
                code(k);
                line_ += token.kind == LexToken::Kind::Path ? " ," : ",";
            }
        }
        begin_line(close, indent, false);
        code(close);
        return close;
    }

    std::span<const LexToken> tokens_;
    std::string out_;
    std::string line_;               // the line being built, with its indentation
    std::size_t indent_ = 0;         // of line_
    std::size_t depth_ = 0;          // of blocks
    std::size_t next_code_ = 0;      // the first code token after the last comment looked at
    const LexToken* last_ = nullptr; // the last code token on line_
    bool started_ = false;           // line_ holds a line
    bool closed_ = false;            // line_ ends with a comment
    bool after_open_ = false;        // line_ opens a block or a split set
    bool blank_due_ = false;         // line_ closes a policy
    bool in_set_ = false;            // the current statement is a `set`
};

} // namespace

std::optional<std::string> run_format(const SourceFile& file, Diagnostics& diags)
{
    const auto tokens = run_lex(file, diags);
    if (!tokens)
        return std::nullopt;
    return Formatter(*tokens).run();
}

} // namespace bw
