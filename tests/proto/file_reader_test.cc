#include "proto/common/file_reader.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace neuronmon {
namespace {

class FileReaderTest : public ::testing::Test {
 protected:
  FileReaderTest()
      : dir_(std::filesystem::temp_directory_path() /
             ("neuronmon-file-reader-" + std::to_string(::getpid()))) {
    std::filesystem::create_directories(dir_);
  }
  ~FileReaderTest() override { std::filesystem::remove_all(dir_); }

  std::string Write(const std::string& name, const std::string& text, mode_t mode) {
    const std::string path = (dir_ / name).string();
    std::ofstream(path) << text;
    ::chmod(path.c_str(), mode);
    return path;
  }

  std::filesystem::path dir_;
};

TEST_F(FileReaderTest, ReadsASmallRegularFile) {
  const std::string path = Write("a.json", "{\"seed\": 1}\n", 0644);
  Result<std::string> text = ReadRegularFile(path, 64);
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  EXPECT_EQ(*text, "{\"seed\": 1}\n");
}

TEST_F(FileReaderTest, RefusesWhatCouldBlockOrNeverEnd) {
  const std::string fifo = (dir_ / "fifo").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_EQ(ReadRegularFile(fifo, 64).status().message(), fifo + ": not a regular file");
  EXPECT_EQ(ReadRegularFile("/dev/zero", 64).status().message(), "/dev/zero: not a regular file");
  EXPECT_EQ(ReadRegularFile(dir_.string(), 64).status().message(),
            dir_.string() + ": not a regular file");
  const Result<std::string> missing = ReadRegularFile((dir_ / "none").string(), 64);
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(missing.status().message(),
            (dir_ / "none").string() + ": cannot open: No such file or directory");
}

TEST_F(FileReaderTest, RefusesFilesOverTheCap) {
  const std::string path = Write("big", std::string(65, 'x'), 0644);
  EXPECT_EQ(ReadRegularFile(path, 64).status().message(), path + ": file larger than 64 bytes");
  EXPECT_TRUE(ReadRegularFile(path, 65).ok());
  EXPECT_EQ(FormatBytes(1 << 20), "1 MiB");
  EXPECT_EQ(FormatBytes(4096), "4 KiB");
  EXPECT_EQ(FormatBytes(1), "1 byte");
}

TEST_F(FileReaderTest, SecretFileMustNotBeReadableByOthers) {
  const std::string open = Write("open-token", "s3cret\n", 0644);
  EXPECT_EQ(ReadSecretFile(open).status().message(),
            open + ": mode 0644 lets every user read the token; make it 0600 or 0640");
  const std::string closed = Write("token", "  s3cret \r\nsecond line\n", 0640);
  Result<std::string> token = ReadSecretFile(closed);
  ASSERT_TRUE(token.ok()) << token.status().ToString();
  EXPECT_EQ(*token, "s3cret");
  const std::string empty = Write("empty", "\n", 0600);
  EXPECT_EQ(ReadSecretFile(empty).status().message(), empty + ": the token file is empty");
  const std::string big = Write("big", std::string(5000, 'x'), 0600);
  EXPECT_EQ(ReadSecretFile(big).status().message(), big + ": file larger than 4 KiB");
}

}  // namespace
}  // namespace neuronmon
