// Bumblewrap policy language (.bwp). Only compiler/parse sees this grammar; it turns the
// parse tree into ast::Module and never walks a tree that had syntax errors.
//
//   # comment to end of line
//   policy "demo" {
//       default deny
//       allow /usr/
//       deny  "/tmp/with space/"
//   }
//
// Statements are separated by whitespace only. Paths are not validated here: the check
// stage does that, so that its diagnostics can name the rule.
grammar Bwp;

file        : policy* EOF ;
policy      : POLICY name=STRING LBRACE statement* RBRACE ;
statement   : defaultStmt | pathRule ;
defaultStmt : DEFAULT action ;
pathRule    : action pattern ;
action      : ALLOW | DENY ;
pattern     : PATH | STRING ;

POLICY  : 'policy' ;
DEFAULT : 'default' ;
ALLOW   : 'allow' ;
DENY    : 'deny' ;
LBRACE  : '{' ;
RBRACE  : '}' ;

// Strings stay on one line, so that a missing quote is reported where it is missing: no
// rule accepts UNTERMINATED_STRING (a string cut by the end of the line or file, maybe after
// a lone `\`), and the parse stage reports each one. It also resolves escapes and reports
// bad ones, so that the lexer need not know them.
STRING              : '"' STRING_CHAR* '"' ;
UNTERMINATED_STRING : '"' STRING_CHAR* '\\'? ;
fragment STRING_CHAR : '\\' ~[\r\n] | ~["\\\r\n] ;

// An unquoted path runs from `/` to whitespace, `"` or `#`. Glob syntax (`*`, `?`,
// `[a-z]`, `{a,b}`) therefore needs no quoting, but a `}` right after a path belongs to the
// path: the `}` that closes a policy must be separated from a path by whitespace.
PATH : '/' ~[ \t\r\n"#]* ;

COMMENT : '#' ~[\r\n]* -> skip ;
WS      : [ \t\r\n]+ -> skip ;

// Any other run of characters (a relative path, a misspelt keyword, `;`) becomes one token,
// so that the lexer never fails and the parser can name the whole word in its error.
WORD : ~[ \t\r\n"#{}/] ~[ \t\r\n"#{}]* ;
