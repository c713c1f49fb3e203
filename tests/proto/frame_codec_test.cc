#include "proto/wire/frame_codec.h"

#include <google/protobuf/util/message_differencer.h>
#include <gtest/gtest.h>

#include <random>
#include <set>
#include <string>
#include <vector>

namespace neuronmon::wire {
namespace {

using Outcome = FrameDecoder::Outcome;
using google::protobuf::util::MessageDifferencer;

v1::Envelope MakeHello(const std::string& name) {
  v1::Envelope e;
  e.mutable_hello()->set_protocol_version(1);
  e.mutable_hello()->set_client_name(name);
  return e;
}

// Decodes everything in `bytes`, in chunks of `chunk` bytes; returns frames or stops at an error.
struct Decoded {
  std::vector<v1::Envelope> frames;
  DecodeError error = DecodeError::kNone;
  bool need_more_at_end = false;
};

Decoded DecodeAll(std::string_view bytes, std::size_t chunk, std::size_t max = 1 << 20) {
  FrameDecoder decoder(max);
  Decoded out;
  while (!bytes.empty()) {
    std::string_view piece = bytes.substr(0, chunk);
    bytes.remove_prefix(piece.size());
    for (;;) {
      v1::Envelope e;
      Outcome o = decoder.Decode(piece, e);
      if (o == Outcome::kFrame) {
        out.frames.push_back(std::move(e));
        continue;
      }
      if (o == Outcome::kError) {
        out.error = decoder.error();
        return out;
      }
      break;  // need more: piece fully consumed
    }
    EXPECT_TRUE(piece.empty());
  }
  out.need_more_at_end = decoder.buffered_bytes() > 0;
  return out;
}

TEST(FrameCodec, EncodesVarintLengthThenEnvelope) {
  v1::Envelope e = MakeHello("t");
  Result<std::string> frame = EncodeFrame(e);
  ASSERT_TRUE(frame.ok());
  // Hello{protocol_version=1, client_name="t"} = 08 01 12 01 74 inside field 1 (0a 05 ...).
  EXPECT_EQ(*frame, std::string("\x07\x0a\x05\x08\x01\x12\x01t", 8));
}

TEST(FrameCodec, RefusesEmptyEnvelopeAndOversizedFrame) {
  EXPECT_EQ(EncodeFrame(v1::Envelope()).status().code(), StatusCode::kInvalidArgument);
  v1::Envelope big = MakeHello(std::string(2000, 'x'));
  Result<std::string> r = EncodeFrame(big, 1000);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kOutOfRange);
}

TEST(FrameDecoder, RejectsLengthOverMaximumBeforeReadingBody) {
  FrameDecoder decoder(64 * 1024);
  // 70000 = 0xF0 0xA2 0x04 as a varint; no body follows.
  std::string_view bytes("\xF0\xA2\x04", 3);
  v1::Envelope e;
  EXPECT_EQ(decoder.Decode(bytes, e), Outcome::kError);
  EXPECT_EQ(decoder.error(), DecodeError::kFrameTooLarge);
  EXPECT_EQ(decoder.error_message(), "frame of 70000 bytes exceeds the 65536-byte limit");
  EXPECT_EQ(decoder.buffered_bytes(), 3u);  // header only: nothing was allocated for the body
}

TEST(FrameDecoder, AcceptsLengthExactlyAtMaximum) {
  v1::Envelope e = MakeHello(std::string(100, 'y'));
  std::string frame = *EncodeFrame(e);
  const std::size_t body = e.ByteSizeLong();
  EXPECT_EQ(DecodeAll(frame, frame.size(), body).frames.size(), 1u);
  EXPECT_EQ(DecodeAll(frame, frame.size(), body - 1).error, DecodeError::kFrameTooLarge);
}

TEST(FrameDecoder, RejectsVarintLongerThanFiveBytes) {
  FrameDecoder decoder;
  std::string_view bytes("\x80\x80\x80\x80\x80\x01", 6);
  v1::Envelope e;
  EXPECT_EQ(decoder.Decode(bytes, e), Outcome::kError);
  EXPECT_EQ(decoder.error(), DecodeError::kVarintTooLong);
  EXPECT_EQ(bytes.size(), 1u);  // stopped at the fifth byte
}

TEST(FrameDecoder, RejectsFiveByteVarintOver32Bits) {
  FrameDecoder decoder(~std::size_t{0});
  std::string_view bytes("\xFF\xFF\xFF\xFF\x1F", 5);
  v1::Envelope e;
  EXPECT_EQ(decoder.Decode(bytes, e), Outcome::kError);
  EXPECT_EQ(decoder.error(), DecodeError::kVarintTooLong);
}

TEST(FrameDecoder, RejectsZeroLength) {
  FrameDecoder decoder;
  std::string_view bytes("\x00", 1);
  v1::Envelope e;
  EXPECT_EQ(decoder.Decode(bytes, e), Outcome::kError);
  EXPECT_EQ(decoder.error(), DecodeError::kZeroLength);
}

TEST(FrameDecoder, RejectsUnparsableBody) {
  FrameDecoder decoder;
  // Length 2, then a field tag with wire type 7 (invalid).
  std::string_view bytes("\x02\x0F\x00", 3);
  v1::Envelope e;
  EXPECT_EQ(decoder.Decode(bytes, e), Outcome::kError);
  EXPECT_EQ(decoder.error(), DecodeError::kUnparsable);
}

TEST(FrameDecoder, ErrorIsSticky) {
  FrameDecoder decoder;
  std::string_view bad("\x00", 1);
  v1::Envelope e;
  ASSERT_EQ(decoder.Decode(bad, e), Outcome::kError);
  std::string good = *EncodeFrame(MakeHello("after"));
  std::string_view rest(good);
  EXPECT_EQ(decoder.Decode(rest, e), Outcome::kError);
}

TEST(FrameDecoder, EachErrorHasDistinctName) {
  std::set<std::string> names;
  for (DecodeError d : {DecodeError::kFrameTooLarge, DecodeError::kVarintTooLong,
                        DecodeError::kZeroLength, DecodeError::kUnparsable}) {
    names.insert(DecodeErrorName(d));
  }
  EXPECT_EQ(names.size(), 4u);
}

TEST(FrameDecoder, SkipsNothingWhenBodyIsUnknownNewerMessage) {
  // Field 99, length-delimited, 1 byte: a body this build does not know.
  std::string frame("\x04\x9a\x06\x01\x00", 5);
  Decoded d = DecodeAll(frame, frame.size());
  ASSERT_EQ(d.frames.size(), 1u);
  EXPECT_EQ(d.frames[0].body_case(), v1::Envelope::BODY_NOT_SET);
}

TEST(FrameDecoder, FrameSplitAtEveryByteBoundary) {
  v1::Envelope a = MakeHello("neuron-top/0.1.0");
  v1::Envelope b;
  b.mutable_report()->set_seq(42);
  b.mutable_report()->add_runtimes()->set_tag(std::string(300, 'r'));  // 2-byte length prefix
  std::string bytes = *EncodeFrame(a) + *EncodeFrame(b);
  for (std::size_t split = 1; split < bytes.size(); ++split) {
    FrameDecoder decoder;
    std::vector<v1::Envelope> got;
    for (std::string_view piece :
         {std::string_view(bytes).substr(0, split), std::string_view(bytes).substr(split)}) {
      v1::Envelope e;
      while (decoder.Decode(piece, e) == Outcome::kFrame) got.push_back(e);
      ASSERT_TRUE(piece.empty()) << "split " << split;
    }
    ASSERT_EQ(got.size(), 2u) << "split " << split;
    EXPECT_TRUE(MessageDifferencer::Equals(got[0], a));
    EXPECT_TRUE(MessageDifferencer::Equals(got[1], b));
  }
}

TEST(FrameDecoder, ByteAtATime) {
  std::string bytes = *EncodeFrame(MakeHello("slow"));
  Decoded d = DecodeAll(bytes, 1);
  ASSERT_EQ(d.frames.size(), 1u);
  EXPECT_EQ(d.frames[0].hello().client_name(), "slow");
}

TEST(FrameDecoder, ManyFramesInOneChunk) {
  std::string bytes;
  for (int i = 0; i < 500; ++i) {
    ASSERT_TRUE(AppendFrame(MakeHello("c" + std::to_string(i)), bytes).ok());
  }
  Decoded d = DecodeAll(bytes, bytes.size());
  ASSERT_EQ(d.frames.size(), 500u);
  EXPECT_EQ(d.frames[499].hello().client_name(), "c499");
  EXPECT_FALSE(d.need_more_at_end);
}

TEST(FrameDecoder, TruncatedFrameNeedsMore) {
  std::string bytes = *EncodeFrame(MakeHello("cut"));
  bytes.pop_back();
  Decoded d = DecodeAll(bytes, bytes.size());
  EXPECT_TRUE(d.frames.empty());
  EXPECT_EQ(d.error, DecodeError::kNone);
  EXPECT_TRUE(d.need_more_at_end);
}

v1::Envelope RandomEnvelope(std::mt19937_64& rng) {
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
  auto text = [&](int max) {
    std::string s(static_cast<std::size_t>(pick(max) + 1), 'a');
    for (char& c : s) c = static_cast<char>('a' + pick(26));
    return s;
  };
  v1::Envelope e;
  switch (pick(5)) {
    case 0:
      e.mutable_hello()->set_client_name(text(40));
      e.mutable_hello()->set_protocol_version(static_cast<std::uint32_t>(rng()));
      break;
    case 1: {
      v1::Report* r = e.mutable_report();
      r->set_seq(rng());
      r->set_period_ns(rng() % 10'000'000'000);
      for (int i = pick(20); i > 0; --i) {
        v1::RuntimeReport* rt = r->add_runtimes();
        rt->set_pid(static_cast<std::uint32_t>(rng()));
        rt->set_tag(text(30));
        for (int c = pick(64); c > 0; --c) {
          v1::CoreCounters* core = rt->mutable_neuroncore_counters()->add_cores();
          core->set_index(static_cast<std::uint32_t>(c));
          core->set_utilization_percent(static_cast<double>(rng() % 10000) / 100.0);
          core->set_flops(static_cast<double>(rng() % 1'000'000'000'000));
        }
      }
      break;
    }
    case 2:
      e.mutable_notice()->set_kind(v1::NOTICE_KIND_GAP);
      e.mutable_notice()->set_first_seq(rng());
      e.mutable_notice()->set_text(text(100));
      break;
    case 3:
      e.mutable_error()->set_code(v1::ERROR_CODE_INVALID_SUBSCRIPTION);
      e.mutable_error()->set_message(text(200));
      break;
    default: {
      v1::Subscribe* s = e.mutable_subscribe();
      for (int i = pick(8); i >= 0; --i) {
        v1::GroupSubscription* g = s->add_groups();
        g->set_group(v1::GROUP_HBM_STATS);
        g->set_period_ns(rng() % 100'000'000'000);
      }
      if (pick(2)) s->set_resume_after_seq(rng());
      s->set_tag_filter(text(20));
      break;
    }
  }
  return e;
}

TEST(FrameDecoder, RoundTripsRandomizedEnvelopesInRandomChunks) {
  std::mt19937_64 rng(20261202);
  std::vector<v1::Envelope> sent;
  std::string bytes;
  for (int i = 0; i < 300; ++i) {
    sent.push_back(RandomEnvelope(rng));
    ASSERT_TRUE(AppendFrame(sent.back(), bytes).ok());
  }
  for (std::size_t chunk : {std::size_t{1}, std::size_t{7}, std::size_t{4096}, bytes.size()}) {
    Decoded d = DecodeAll(bytes, chunk, kDefaultOutboundMaxFrame);
    ASSERT_EQ(d.error, DecodeError::kNone);
    ASSERT_EQ(d.frames.size(), sent.size()) << "chunk " << chunk;
    for (std::size_t i = 0; i < sent.size(); ++i) {
      ASSERT_TRUE(MessageDifferencer::Equals(d.frames[i], sent[i])) << "frame " << i;
    }
  }
}

// A frame of empty sub-messages costs 2 bytes each on the wire and an object each once parsed:
// a decoder with a field budget refuses it before parsing.
TEST(FrameDecoder, AFieldBudgetRefusesFramesThatWouldExplodeWhenParsed) {
  v1::Envelope e;
  v1::Inventory* inv = e.mutable_welcome()->mutable_inventory();
  for (int i = 0; i < 1000; ++i) inv->add_devices();
  const std::string frame = *EncodeFrame(e);
  FrameDecoder bounded(kDefaultOutboundMaxFrame, 500);
  std::string_view in(frame);
  v1::Envelope out;
  ASSERT_EQ(bounded.Decode(in, out), FrameDecoder::Outcome::kError);
  EXPECT_EQ(bounded.error(), DecodeError::kTooComplex);
  EXPECT_EQ(bounded.error_message(),
            "frame of " + std::to_string(frame.size() - 2) +
                " bytes holds more than 500 messages, strings and unknown fields, or is "
                "malformed");
  FrameDecoder roomy(kDefaultOutboundMaxFrame, 2000);
  std::string_view again(frame);
  ASSERT_EQ(roomy.Decode(again, out), FrameDecoder::Outcome::kFrame);
  EXPECT_EQ(out.welcome().inventory().devices_size(), 1000);
}

TEST(WithinFieldBudget, CountsNestedMessagesAndStrings) {
  v1::Envelope e;
  v1::Inventory* inv = e.mutable_welcome()->mutable_inventory();  // welcome, inventory: 2
  inv->mutable_instance_info()->set_instance_id("i-1");           // instance_info, its id: 2
  v1::Device* d = inv->add_devices();                             // 1
  d->set_pci_bdf("0000:00:1e.0");                                 // 1
  d->add_core_ids(0);                                             // packed: 1
  d->add_core_ids(1);
  const std::string bytes = e.SerializeAsString();
  EXPECT_TRUE(WithinFieldBudget(bytes, *v1::Envelope::descriptor(), 7));
  EXPECT_FALSE(WithinFieldBudget(bytes, *v1::Envelope::descriptor(), 6));
  EXPECT_FALSE(
      WithinFieldBudget(bytes.substr(0, bytes.size() - 3), *v1::Envelope::descriptor(), 100))
      << "a truncated message is malformed";
}

// `count` copies of one field's bytes: what a hostile daemon packs a frame with.
std::string Repeated(std::string_view field, int count) {
  std::string out;
  for (int i = 0; i < count; ++i) out.append(field);
  return out;
}

// Unknown fields are kept aside by the parser, an entry each, whatever their wire type: a frame
// of 16 MiB of them (varint field 15 = 0, two bytes each) would hold eight million entries.
TEST(WithinFieldBudget, CountsUnknownFieldsOfEveryWireType) {
  const std::string varints = Repeated(std::string("\x78\x00", 2), 1000);
  EXPECT_FALSE(WithinFieldBudget(varints, *v1::Envelope::descriptor(), 999));
  EXPECT_TRUE(WithinFieldBudget(varints, *v1::Envelope::descriptor(), 1000));
  const std::string fixed = Repeated(std::string("\x7d\x00\x00\x00\x00", 5), 1000);  // fixed32
  EXPECT_FALSE(WithinFieldBudget(fixed, *v1::Envelope::descriptor(), 999));
  // A known field in an unexpected wire type is an unknown one: Report.wall_time_unix_ns (2), an
  // int64, as fixed64, ten times in Envelope.report.
  const std::string report_body = Repeated(std::string("\x11\0\0\0\0\0\0\0\0", 9), 10);
  const std::string bytes = "\x22" + std::string(1, static_cast<char>(report_body.size())) +
                            report_body;  // Envelope.report (4), length < 128
  EXPECT_FALSE(WithinFieldBudget(bytes, *v1::Envelope::descriptor(), 10));
  EXPECT_TRUE(WithinFieldBudget(bytes, *v1::Envelope::descriptor(), 11));
}

// Known scalars cost nothing of their own, unpacked or not: Device.core_ids (3) one by one.
TEST(WithinFieldBudget, KnownScalarsAreFree) {
  const std::string device = Repeated(std::string("\x18\x05", 2), 60);  // 120 bytes
  const std::string inventory = "\x1a" + std::string(1, static_cast<char>(device.size())) + device;
  const std::string welcome =
      "\x1a" + std::string(1, static_cast<char>(inventory.size())) + inventory;
  const std::string envelope = "\x12" + std::string(1, static_cast<char>(welcome.size())) + welcome;
  ASSERT_LT(welcome.size(), 128u);
  EXPECT_TRUE(WithinFieldBudget(envelope, *v1::Envelope::descriptor(), 3));
  v1::Envelope parsed;
  ASSERT_TRUE(parsed.ParseFromString(envelope));
  EXPECT_EQ(parsed.welcome().inventory().devices(0).core_ids_size(), 60);
}

// Groups (start/end pairs, two bytes each) parse as nested unknown sets: never from a v1 daemon.
TEST(WithinFieldBudget, RefusesGroups) {
  EXPECT_FALSE(WithinFieldBudget(std::string("\x7b\x7c", 2), *v1::Envelope::descriptor(), 100));
  FrameDecoder decoder(kDefaultOutboundMaxFrame, kDefaultMaxFields);
  const std::string frame = std::string("\x04", 1) + Repeated(std::string("\x7b\x7c", 2), 2);
  std::string_view in(frame);
  v1::Envelope out;
  ASSERT_EQ(decoder.Decode(in, out), FrameDecoder::Outcome::kError);
  EXPECT_EQ(decoder.error(), DecodeError::kTooComplex);
}

}  // namespace
}  // namespace neuronmon::wire
