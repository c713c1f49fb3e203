# Writes OUTPUT: a C++ source holding every scenarios/*.json as a raw string literal.
file(GLOB files "${SCENARIO_DIR}/*.json")
list(SORT files)
set(body "")
set(count 0)
foreach(f ${files})
  get_filename_component(name "${f}" NAME_WE)
  file(READ "${f}" text)
  string(APPEND body "    {\"${name}\", R\"neuronmon_json(${text})neuronmon_json\"},\n")
  math(EXPR count "${count} + 1")
endforeach()
file(WRITE "${OUTPUT}.tmp"
"// Generated from simdev/scenarios/*.json by simdev/embed_scenarios.cmake. Do not edit.\n"
"#include \"simdev/scenario_library.h\"\n\n"
"namespace neuronmon::simdev {\n"
"extern const BuiltinScenario kBuiltinScenarios[];\n"
"extern const std::size_t kBuiltinScenarioCount;\n"
"const BuiltinScenario kBuiltinScenarios[] = {\n${body}};\n"
"const std::size_t kBuiltinScenarioCount = ${count};\n"
"}  // namespace neuronmon::simdev\n")
file(COPY_FILE "${OUTPUT}.tmp" "${OUTPUT}" ONLY_IF_DIFFERENT)
