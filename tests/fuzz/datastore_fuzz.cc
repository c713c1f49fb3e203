// Fuzzes the runtime datastore decoder with hostile images: any user can create a datastore for
// their own pid and write anything into it. The input is [cores:1][size:3][bytes...]: the image is
// `size` bytes (up to 320 KiB) filled by repeating the bytes, so short, huge, signed and unsigned
// images all come up. Invariants: no crash, no read outside the image; a decoded image has the
// signature, a positive version, at least kMinimumSize bytes and exactly the cores asked for; a
// reading never fell back from itself.
#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

#include "neurondev/datastore.h"
#include "tests/fuzz/fuzz_fail.h"

namespace {

[[noreturn]] void Fail(std::string_view what) { neuronmon::fuzz::FuzzFail("datastore_fuzz", what); }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace ds = neuronmon::datastore;
  if (size < 4) return 0;
  const std::size_t cores = data[0] % 18;  // 16 and beyond included: refused
  const std::size_t bytes =
      (std::size_t{data[1]} << 16 | std::size_t{data[2]} << 8 | data[3]) % (320 * 1024 + 1);
  std::vector<std::byte> image(bytes);
  const std::size_t body = size - 4;
  for (std::size_t i = 0; body > 0 && i < bytes; ++i) image[i] = std::byte{data[4 + i % body]};
  const auto r = ds::Decode(image, cores);
  if (!r.ok()) return 0;
  if (bytes < ds::kMinimumSize) Fail("decoded an image shorter than the layout");
  if (std::memcmp(image.data(), "nds", 4) != 0) Fail("decoded without the signature");
  if (r->format_version <= 0) Fail("decoded a version that is not positive");
  if (r->cores.size() != cores || cores == 0 || cores > ds::kMaxCores) Fail("wrong core count");
  if (!ds::FellBack(*r, *r).empty()) Fail("a reading fell back from itself");
  (void)r->runtime_version().Text();
  return 0;
}
