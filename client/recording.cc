#include "client/recording.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace neuronmon::client {

Result<std::unique_ptr<RecordingFile>> RecordingFile::Prepare(const std::string& path,
                                                              std::string recorder) {
  if (path.empty()) return Status::InvalidArgument("--record needs a file name");
  if (::access(path.c_str(), F_OK) == 0) {
    return Status::AlreadyExists(path + " already exists; --record does not overwrite files");
  }
  const auto slash = path.rfind('/');
  const std::string dir =
      slash == std::string::npos ? "." : path.substr(0, std::max<std::size_t>(1, slash));
  if (::access(dir.c_str(), W_OK) != 0) {
    return Status::IoError("cannot write in " + dir + ": " + std::strerror(errno));
  }
  std::unique_ptr<RecordingFile> r(new RecordingFile());
  r->path_ = path;
  r->recorder_ = std::move(recorder);
  return r;
}

RecordingFile::~RecordingFile() { (void)Close(); }

void RecordingFile::SetWelcome(const v1::Welcome& welcome) {
  welcome_ = welcome;
  if (inventory_.devices_size() == 0) inventory_ = welcome.inventory();
}

Status RecordingFile::Add(const v1::ArchiveRecord& record) {
  switch (record.body_case()) {
    case v1::ArchiveRecord::kInventory:
      inventory_ = record.inventory();
      return Status::Ok();
    case v1::ArchiveRecord::kDescription:
      description_ = record.description();
      return Status::Ok();
    case v1::ArchiveRecord::kSnapshot:
      break;
    default:
      return Status::Ok();
  }
  Result<Snapshot> snapshot = decoder_.Decode(record.snapshot());
  if (!snapshot.ok()) return snapshot.status();
  if (writer_ == nullptr) {
    v1::ArchiveHeader header;
    header.set_daemon_version(welcome_.daemon_version());
    header.set_description(description_);
    header.set_base_period_ns(welcome_.base_period_ns());
    header.set_instance_id(welcome_.instance_id());
    header.set_hostname(inventory_.instance_info().instance_id());
    header.set_recorder(recorder_);
    Result<std::unique_ptr<archive::ArchiveWriter>> w =
        archive::ArchiveWriter::Create(path_, header);
    if (!w.ok()) return w.status();
    writer_ = std::move(*w);
  }
  return writer_->Append(*snapshot, inventory_, description_);
}

Status RecordingFile::Close() {
  if (writer_ == nullptr) return Status::Ok();
  Status st = writer_->Close();
  return st;
}

}  // namespace neuronmon::client
