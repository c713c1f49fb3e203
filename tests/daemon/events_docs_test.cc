// docs/events.md's table of kinds is the code's: every kind the daemon emits has a row, and every
// row is a kind.
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "daemon/core/events.h"
#include "proto/names/names.h"

namespace neuronmon::daemon {
namespace {

TEST(EventsDocs, EveryKindHasARowAndEveryRowIsAKind) {
  std::ifstream in(std::string(NEURONMON_SOURCE_DIR) + "/docs/events.md");
  ASSERT_TRUE(in) << "docs/events.md";
  std::stringstream text;
  text << in.rdbuf();
  const std::string doc = text.str();
  const std::size_t start = doc.find("## Kinds");
  ASSERT_NE(start, std::string::npos);
  const std::size_t end = doc.find("\n## ", start + 1);
  std::istringstream table(doc.substr(start, end - start));
  std::set<std::string> rows;
  for (std::string line; std::getline(table, line);) {
    if (line.rfind("| `", 0) != 0) continue;
    rows.insert(line.substr(3, line.find('`', 3) - 3));
  }
  std::set<std::string> kinds;
  const google::protobuf::EnumDescriptor* d = v1::EventKind_descriptor();
  for (int i = 0; i < d->value_count(); ++i) {
    const auto kind = static_cast<v1::EventKind>(d->value(i)->number());
    if (kind != v1::EVENT_KIND_UNSPECIFIED) kinds.insert(EventKindName(kind));
  }
  EXPECT_EQ(rows, kinds);
}

}  // namespace
}  // namespace neuronmon::daemon
