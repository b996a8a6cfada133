// The bumblewrap policy language (.bwp); docs/language.md is its reference. Only
// compiler/parse sees this grammar: it turns the parse tree into ast::Module and never
// walks a tree that had syntax errors. Names, numbers, addresses and the like are all
// lexed as WORD and validated by the check stage, which can say precisely what is wrong.
//
// Statements are separated by whitespace only.
grammar Bwp;

file      : policy* EOF ;
policy    : POLICY name=STRING LBRACE statement* RBRACE ;

statement
    : metadata
    | requiresStmt
    | includeStmt
    | letStmt
    | setStmt
    | defaultStmt
    | pathRule
    | syscallRule
    | netRule
    | deviceRule
    | whenBlock
    | unsafeStmt
    ;

metadata     : key=(DESCRIPTION | VERSION) value=STRING ;
requiresStmt : REQUIRES what=(KERNEL | FEATURE) word ;
includeStmt  : INCLUDE target=STRING ;
letStmt      : LET name=word EQUALS value=(STRING | PATH) ;
setStmt      : SET name=word EQUALS kind=(PATHS | SYSCALLS) LBRACE (item (COMMA item)* COMMA?)? RBRACE ;
item         : STRING | PATH | GROUP | SETREF | word ;

defaultStmt  : scope=(NET | SYSCALLS)? DEFAULT action syscallAction? ;

pathRule     : action accessList OWNER? target=(STRING | PATH | SETREF) flagsClause? ;
accessList   : access (COMMA access)* ;
access       : READ | WRITE | APPEND | EXEC | CREATE | DELETE | RENAME | LINK | METADATA | STAT | ATTR
             | IOCTL | ALL ;
flagsClause  : FLAGS word (COMMA word)* ;

syscallRule  : SYSCALLS action item (COMMA item)* syscallAction? ;
syscallAction: ACTION (KILL | ERRNO LPAREN word RPAREN) ;

netRule      : NET action netTarget ;
netTarget    : ALL
             | FAMILY word (COMMA word)*
             | proto=(TCP | UDP) direction=(CONNECT | BIND) word (COMMA word)*
             ;

deviceRule   : DEVICE action accessList deviceTarget ioctlClause? ;
deviceTarget : STRING | PATH | SETREF | kind=(CHAR | BLOCK) word ;
ioctlClause  : IOCTL (ANY | word (COMMA word)*) ;

// Invariant names are validated by the check stage, like every other name.
unsafeStmt   : UNSAFE word (COMMA word)* ;

whenBlock    : WHEN condition (AND condition)* LBRACE statement* RBRACE ;
condition    : EXE (STRING | PATH)
             | (UID | GID) word
             ;

action       : ALLOW | DENY | AUDIT ;

// Syscall names, families and flags may coincide with keywords (`read`, `bind`, `kill`).
word : WORD | POLICY | DESCRIPTION | VERSION | REQUIRES | KERNEL | FEATURE | INCLUDE | LET | SET
     | PATHS | SYSCALLS | DEFAULT | ALLOW | DENY | AUDIT | READ | WRITE | APPEND | EXEC | CREATE
     | DELETE | RENAME | LINK | METADATA | STAT | ATTR | IOCTL | ALL | OWNER | FLAGS | ACTION
     | KILL | ERRNO | NET | FAMILY | TCP | UDP | CONNECT | BIND | DEVICE | CHAR | BLOCK | ANY
     | WHEN | EXE | UID | GID | AND | UNSAFE ;

POLICY      : 'policy' ;
DESCRIPTION : 'description' ;
VERSION     : 'version' ;
REQUIRES    : 'requires' ;
KERNEL      : 'kernel' ;
FEATURE     : 'feature' ;
INCLUDE     : 'include' ;
LET         : 'let' ;
SET         : 'set' ;
PATHS       : 'paths' ;
SYSCALLS    : 'syscalls' ;
DEFAULT     : 'default' ;
ALLOW       : 'allow' ;
DENY        : 'deny' ;
AUDIT       : 'audit' ;
READ        : 'read' ;
WRITE       : 'write' ;
APPEND      : 'append' ;
EXEC        : 'exec' ;
CREATE      : 'create' ;
DELETE      : 'delete' ;
RENAME      : 'rename' ;
LINK        : 'link' ;
METADATA    : 'metadata' ;
STAT        : 'stat' ;
ATTR        : 'attr' ;
IOCTL       : 'ioctl' ;
ALL         : 'all' ;
OWNER       : 'owner' ;
FLAGS       : 'flags' ;
ACTION      : 'action' ;
KILL        : 'kill' ;
ERRNO       : 'errno' ;
NET         : 'net' ;
FAMILY      : 'family' ;
TCP         : 'tcp' ;
UDP         : 'udp' ;
CONNECT     : 'connect' ;
BIND        : 'bind' ;
DEVICE      : 'device' ;
CHAR        : 'char' ;
BLOCK       : 'block' ;
ANY         : 'any' ;
WHEN        : 'when' ;
EXE         : 'exe' ;
UID         : 'uid' ;
GID         : 'gid' ;
AND         : 'and' ;
UNSAFE      : 'unsafe' ;

LBRACE : '{' ;
RBRACE : '}' ;
LPAREN : '(' ;
RPAREN : ')' ;
COMMA  : ',' ;
EQUALS : '=' ;

// Strings stay on one line, so that a missing quote is reported where it is missing: no
// rule accepts UNTERMINATED_STRING, and the parse stage reports each one. It also resolves
// escapes and reports bad ones, so that the lexer need not know them.
STRING              : '"' STRING_CHAR* '"' ;
UNTERMINATED_STRING : '"' STRING_CHAR* '\\'? ;
fragment STRING_CHAR : '\\' ~[\r\n] | ~["\\\r\n] ;

// An unquoted path starts with `/` or with a variable (`${HOME}/...`) and runs to
// whitespace, `"`, `#`, or a `,` or `}` outside braces, so glob syntax (`*`, `?`, `[a-z]`,
// `{a,b}`) needs no quoting, and `{ /a, /b }` and `allow read /x}` read as they look.
PATH : ('/' | '$' BRACED) PATH_CHAR* ;
fragment PATH_CHAR : ~[ \t\r\n"#{},] | BRACED ;
fragment BRACED    : '{' (~[ \t\r\n"#{}] | BRACED)* '}' ;

GROUP  : '@' [a-zA-Z0-9_-]+ ;
SETREF : '$' [a-zA-Z_] [a-zA-Z0-9_-]* ;

// Comments stay in the token stream (hidden from the parser) for `bwc fmt`.
COMMENT : '#' ~[\r\n]* -> channel(HIDDEN) ;
WS      : [ \t\r\n]+ -> skip ;

// Any other run of characters (a name, a number, an address, a misspelt keyword, `;`)
// is one token, so that the lexer never fails and the parser can name the whole word.
WORD : ~[ \t\r\n"#{}/,()=@$] ~[ \t\r\n"#{},()=]* ;
