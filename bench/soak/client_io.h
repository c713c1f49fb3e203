// What every soak client does with the daemon: connect (unix socket or loopback TCP), send what a
// non-blocking socket takes now, build the frames it sends, and name the Errors and Notices it
// receives. Free functions over file descriptors the caller owns; safe from any thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "neuronmon/v1/envelope.pb.h"
#include "proto/common/unique_fd.h"

namespace neuronmon::soak {

// A non-blocking unix stream socket connected to `path`, with SO_RCVBUF `rcvbuf` when > 0 (for a
// unix stream it is the daemon's send buffer that bounds what waits unread; this only shrinks our
// side). Invalid with errno set when the connect fails (EAGAIN: the daemon's backlog is full).
UniqueFd ConnectUnix(const std::string& path, int rcvbuf);

// A TCP socket connected to 127.0.0.1:`port` (the connect waits at most one second), then made
// non-blocking. Invalid with errno set on failure.
UniqueFd ConnectLoopback(std::uint16_t port, int rcvbuf);

// A loopback TCP port free a moment ago (0 when none could be had).
std::uint16_t FreeLoopbackPort();

// Sends what the socket takes now; returns the bytes not sent.
std::string SendSome(int fd, std::string bytes);

// `envelope` as a frame; empty when it cannot be encoded.
std::string Frame(const v1::Envelope& envelope);
std::string HelloFrame(std::uint32_t version = 1, const std::string& name = "soak");
std::string SubscribeFrame(const v1::Subscribe& subscribe);

// `name` without `prefix`, when it starts with it.
std::string Shorten(std::string name, std::string_view prefix);
// "SUBSCRIBED", "GAP/SLOW_CLIENT".
std::string NoticeName(const v1::Notice& n);
// "INVALID_SUBSCRIPTION".
std::string ErrorName(const v1::Error& e);

}  // namespace neuronmon::soak
