// The one way daemon/server includes Boost.Asio. Boost 1.74's awaitable.hpp uses std::exchange
// without including <utility>, which g++ 12 in C++20 mode rejects, so <utility> comes first.
#pragma once

#include <boost/asio/bind_executor.hpp>
#include <boost/asio/buffer.hpp>
#include <boost/asio/generic/stream_protocol.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/local/connect_pair.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <utility>

namespace neuronmon::daemon {
namespace asio = boost::asio;
using GenericSocket = asio::generic::stream_protocol::socket;
}  // namespace neuronmon::daemon
