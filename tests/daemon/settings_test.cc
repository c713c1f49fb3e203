#include "daemon/core/config/settings.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "daemon/core/config/config_file.h"

namespace neuronmon::daemon {
namespace {

std::string ReadDoc(const std::string& name) {
  std::ifstream in(std::string(NEURONMON_SOURCE_DIR) + "/docs/" + name);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(SettingsTest, EveryKeyIsDeclaredOnce) {
  std::set<std::string> keys;
  for (const auto& s : ConfigSettings()) {
    EXPECT_TRUE(keys.insert(s->key()).second) << s->key() << " is declared twice";
  }
  EXPECT_GT(keys.size(), 60u);
}

// docs/security.md explains every limit, and the keys that bound what a host's files cost: a key
// added to the table without a word there fails here.
TEST(SettingsTest, EveryLimitIsDocumentedInSecurityMd) {
  const std::string doc = ReadDoc("security.md");
  ASSERT_FALSE(doc.empty());
  for (const auto& s : ConfigSettings()) {
    const std::string& key = s->key();
    const std::string leaf = key.substr(key.rfind('.') + 1);
    // A limit: every key of "limits", and every max_* key of any section.
    if (!key.starts_with("limits.") && !leaf.starts_with("max_")) continue;
    EXPECT_TRUE(doc.find("`" + key + "`") != std::string::npos ||
                doc.find("`" + leaf + "`") != std::string::npos)
        << key << " is not in docs/security.md";
  }
}

// Every key has a comment in the default file, its own or the one of the keys it is listed with.
TEST(SettingsTest, TheDefaultFileDocumentsEveryKey) {
  const std::string text = DefaultConfigText();
  for (const auto& s : ConfigSettings()) {
    const std::string leaf = s->key().substr(s->key().rfind('.') + 1);
    EXPECT_NE(text.find("\"" + leaf + "\": "), std::string::npos) << s->key();
  }
  std::size_t commented = 0;
  for (const auto& s : ConfigSettings()) commented += s->doc().empty() ? 0 : 1;
  EXPECT_GT(commented * 10, ConfigSettings().size() * 7) << "most keys have their own comment";
}

// A value set on a member is the value the table prints for its key, and reads back: the row's
// member is the one its key names.
TEST(SettingsTest, EachKeySetsItsOwnMember) {
  DaemonConfig c = DefaultConfig();
  c.stream.queue_depth = 7;
  c.metrics.max_requests = 9;
  c.backend.host.kernel_log_options.path = "/var/log/kmsg";
  c.incidents.tracker.hold = std::chrono::seconds(42);
  const std::string json = ConfigToJson(c);
  EXPECT_THAT(json, ::testing::HasSubstr("\"queue_depth\": 7,"));
  EXPECT_THAT(json, ::testing::HasSubstr("\"metrics_max_requests\": 9,"));
  EXPECT_THAT(json, ::testing::HasSubstr("\"path\": \"/var/log/kmsg\","));
  EXPECT_THAT(json, ::testing::HasSubstr("\"hold\": \"42s\","));
  Result<DaemonConfig> back = ParseConfig(json, "json", nullptr);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, c);
}

}  // namespace
}  // namespace neuronmon::daemon
