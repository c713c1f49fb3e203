# Writes OUTPUT: a C++ source holding INPUT (packaging/neuron-monitord.json) as kDefaultConfigText,
# so the shipped file and `neuron-monitord --print-default-config` are one text.
file(READ "${INPUT}" text)
file(WRITE "${OUTPUT}.tmp"
"// Generated from packaging/neuron-monitord.json by daemon/core/embed_default_config.cmake.\n"
"namespace neuronmon::daemon {\n"
"extern const char kDefaultConfigText[];\n"
"const char kDefaultConfigText[] = R\"neuronmon_json(${text})neuronmon_json\";\n"
"}  // namespace neuronmon::daemon\n")
file(COPY_FILE "${OUTPUT}.tmp" "${OUTPUT}" ONLY_IF_DIFFERENT)
