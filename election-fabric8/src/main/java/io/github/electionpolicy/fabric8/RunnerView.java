package io.github.electionpolicy.fabric8;

import java.util.Optional;

/**
 * What readers of a runner see: one immutable snapshot, published by the runner's loop after each batch of
 * inputs, read by {@code state()} and {@code health()} on any thread without a lock.
 *
 * @param state the published state
 * @param servicesRunning whether every service started and none is stopping
 * @param servicesHung whether a service's {@code stop()} outlived the stop timeout
 * @param lastSuccessNanos when the last successful Lease call was sent
 * @param contactWindowNanos how long the runner may go without one and still count as in touch
 */
record RunnerView(ElectionState state, boolean servicesRunning, boolean servicesHung,
    Optional<Long> lastSuccessNanos, long contactWindowNanos) {}
