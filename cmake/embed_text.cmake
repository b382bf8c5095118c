# Generates a C++ file whose function returns one text file's contents, so a data file
# (e.g. configs/exporter_families.yaml) travels inside the binary: an installed `mt` needs
# no source tree. Variables: IN (the file), OUT (the .cpp), HEADER (to include),
# NAMESPACE, FUNCTION (returns const std::string&).
file(READ ${IN} text)
get_filename_component(name ${IN} NAME)
set(body "// Generated from ${name} by cmake/embed_text.cmake. Do not edit.\n")
string(APPEND body "#include \"${HEADER}\"\n\nnamespace ${NAMESPACE} {\n\n")
string(APPEND body "const std::string& ${FUNCTION}() {\n  static const std::string text = R\"mttext(${text})mttext\";\n  return text;\n}\n\n")
string(APPEND body "}  // namespace ${NAMESPACE}\n")
file(WRITE ${OUT}.tmp "${body}")
file(COPY_FILE ${OUT}.tmp ${OUT} ONLY_IF_DIFFERENT)
