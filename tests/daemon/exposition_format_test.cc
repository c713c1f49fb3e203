// Format negotiation: the Content-Type of each format and the format an Accept header chooses.
#include "daemon/core/metrics/exposition_format.h"

#include <gtest/gtest.h>

namespace neuronmon::daemon {
namespace {

TEST(ContentType, NamesBothFormats) {
  EXPECT_EQ(ContentType(ExpositionFormat::kText), "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_EQ(ContentType(ExpositionFormat::kOpenMetrics),
            "application/openmetrics-text; version=1.0.0; charset=utf-8");
}

TEST(ChooseFormat, PicksOpenMetricsOnlyWhenAskedFor) {
  using enum ExpositionFormat;
  // What Prometheus 2.42 sends.
  EXPECT_EQ(ChooseFormat("application/openmetrics-text;version=1.0.0,application/"
                         "openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,"
                         "*/*;q=0.1"),
            kOpenMetrics);
  EXPECT_EQ(ChooseFormat("application/openmetrics-text"), kOpenMetrics);
  EXPECT_EQ(ChooseFormat("APPLICATION/OpenMetrics-Text ; Version=\"1.0.0\""), kOpenMetrics);
  EXPECT_EQ(ChooseFormat("text/plain;q=0.9, application/openmetrics-text"), kOpenMetrics);
  EXPECT_EQ(ChooseFormat(""), kText);
  EXPECT_EQ(ChooseFormat("*/*"), kText);
  EXPECT_EQ(ChooseFormat("text/plain"), kText);
  EXPECT_EQ(ChooseFormat("application/openmetrics-text; version=0.0.1"), kText);
  EXPECT_EQ(ChooseFormat("application/openmetrics-text;version=2.0.0"), kText);
  EXPECT_EQ(ChooseFormat("application/openmetrics-text;q=0"), kText);
  EXPECT_EQ(ChooseFormat("application/openmetrics-text;q=abc"), kText);
  EXPECT_EQ(ChooseFormat("application/openmetrics-text;q=0.2, text/plain"), kText);
  EXPECT_EQ(ChooseFormat("text/plain, application/openmetrics-text"), kText);
  EXPECT_EQ(ChooseFormat(";;,,=;q=,\"\",application/openmetrics-text;;"), kOpenMetrics);
}

}  // namespace
}  // namespace neuronmon::daemon
