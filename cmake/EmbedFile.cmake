# Script mode: writes INPUT's bytes as a C++ array named SYMBOL into OUTPUT.
file(READ ${INPUT} hex HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "std::byte{0x\\1}," body "${hex}")
file(WRITE ${OUTPUT}.tmp
    "#include <cstddef>\n#include <span>\n"
    "namespace bw::embedded {\n"
    "static const std::byte ${SYMBOL}_data[] = {${body}};\n"
    "extern const std::span<const std::byte> ${SYMBOL}(${SYMBOL}_data, sizeof ${SYMBOL}_data);\n"
    "}\n")
file(RENAME ${OUTPUT}.tmp ${OUTPUT})
