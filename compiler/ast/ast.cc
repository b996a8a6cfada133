#include "ast/ast.h"

namespace bw::ast {

std::string to_string(Action action)
{
    switch (action) {
    case Action::Allow: return "allow";
    case Action::Deny: return "deny";
    case Action::Audit: return "audit";
    }
    return "allow";
}

} // namespace bw::ast
