// Thread guards: how work runs on threads of the library without an exception
// ever ending the process. A C++ exception that leaves a thread's function
// calls std::terminate; these helpers catch everything a body throws and turn
// it into a Status (out of memory into ResourceExhausted, anything else into
// Internal, naming what was being done), and treat a thread the system refuses
// to start as a smaller pool, never a crash.
// Not a thread pool: threads are started and joined per call. Thread-safe:
// each call is independent; the work function must be safe to run on several
// threads at once.
#pragma once

#include <functional>
#include <string_view>

#include "tokenfeed/status.h"

namespace tokenfeed {

// The Status for the exception being handled; call only inside a catch block.
// `doing` says what was under way ("encoding text 7"), put before the message.
Status StatusOfCurrentException(std::string_view doing);

// Runs body and returns its Status; what it throws becomes a Status too.
Status RunGuarded(std::string_view doing, const std::function<Status()>& body) noexcept;

// Runs work(w) for w in [0, n) at once, w = 0 on the calling thread, and waits
// for all. A worker the system cannot start (std::system_error) is skipped, so
// work must take its share from a shared queue (an atomic counter), never from
// its index alone. Returns the failure of the lowest-numbered worker that
// failed, or OK.
Status RunWorkers(unsigned n, std::string_view doing, const std::function<Status(unsigned worker)>& work) noexcept;

}  // namespace tokenfeed
