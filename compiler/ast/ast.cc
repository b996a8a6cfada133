#include "ast/ast.h"

namespace bw::ast {

std::string to_string(Action action)
{
    return action == Action::Allow ? "allow" : "deny";
}

} // namespace bw::ast
