package io.github.electionpolicy.benchmarks.failover;

/**
 * One entry of the {@link EventLog}. Immutable and thread-safe.
 *
 * @param nanos {@link System#nanoTime()} when the event was recorded
 * @param kind what happened
 * @param replica identity of the replica it concerns
 * @param detail free text, such as the HTTP method, status and path of a request
 */
public record BenchEvent(long nanos, EventKind kind, String replica, String detail) {}
