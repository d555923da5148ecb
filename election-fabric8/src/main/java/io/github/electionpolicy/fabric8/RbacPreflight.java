package io.github.electionpolicy.fabric8;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.http.HttpClient;
import io.fabric8.kubernetes.client.http.HttpRequest;
import io.fabric8.kubernetes.client.http.HttpResponse;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.FutureTask;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The start-up check of {@link ElectionRunner} (and of a {@link ShardedRunner}'s membership runner, which asks what
 * the whole replica uses: {@link LeaseNeeds}): a {@link LeaseAccess} review before contending, so a
 * missing Role fails at start with the fix instead of as a stream of 403s. It runs on a Lease I/O thread, beside
 * the elector's first read (whose writes wait for this verdict), so {@code start()} never waits for the API
 * server; the runner acts on a denial. It first asks one {@code SelfSubjectRulesReview} of the namespace: when
 * the rules it lists allow every required verb ({@link LeaseRules}), that is the verdict, in one round trip and
 * one request. Otherwise (a denial, an incomplete list, a failed review) the verdict is the
 * {@code SelfSubjectAccessReview}s', one per required verb, as the server answers each: independent, so they are
 * sent at once on the same I/O pool (see {@link LeaseAccess#review(String, String, LeaseAccess.Reviewer,
 * java.util.concurrent.Executor, boolean)}): one round trip more. {@code watch} (a sharded runner's {@code delete})
 * only decides a warning, so it is asked once the verdict is given and the elector's first attempt is over, off the start
 * path, and warned of when it answers (not at all when the rules showed it allowed). With leadership Events on,
 * the access reviews' path asks one more, never waited for, whether Events may be created; a denial is a warning
 * ({@link EventAccess}), never a reason not to contend. The rules' path asks none: rules that do not show it
 * allowed leave it to the first Event write, whose 403 gives the same one warning.
 */
final class RbacPreflight {

  private static final Logger LOG = LoggerFactory.getLogger(ElectionRunner.class);

  /** How long the rules review may take before the access reviews decide instead. */
  static final int RULES_REVIEW_TIMEOUT_MILLIS = 2_000;

  private RbacPreflight() {}

  /**
   * Reviews the access of a runner with {@code needs} (an {@link ElectionRunner}'s, {@link LeaseNeeds#election()}, or
   * a {@link ShardedRunner}'s, whose membership runner asks its own list of verbs, {@link LeaseNeeds#sharded}); warns
   * unless it is all granted; returns the failure that must stop the runner. Once {@code closing} turns true it sends
   * no further review and reports nothing.
   *
   * <ul>
   *   <li>{@code userClient} gives the client for the access reviews, asked for only when a review is sent (the
   *       transport derives it then: the usual start, decided by the rules review alone, derives none); the rules
   *       review goes through {@code rulesClient} (see {@link #rulesClient}, made once by the caller).
   *   <li>{@code closed} tells whether the runner closed after the check returned: the events review is advice only,
   *       so the check never waits for it, and a denial it answers later is reported then, unless the runner closed.
   *   <li>{@code events} is where a denied {@code create} on events is reported, {@code null} when leadership Events
   *       are off (then it is not asked).
   *   <li>Once the verdict is GRANTED, the {@code watch} review (advice only) is handed to {@code later}, which sends
   *       it when it likes (the transport: once the elector's first attempt is over), or never.
   *   <li>{@code advisedDenied} is told each advised verb a review found denied, after its warning was logged (so
   *       that a refusal of it later, such as the close's delete, need not warn again).
   * </ul>
   */
  static Optional<LeaseAccessDeniedException> check(java.util.function.Supplier<KubernetesClient> userClient,
      KubernetesClient rulesClient, String namespace, LeaseSettings settings, LeaseNeeds needs,
      BooleanSupplier closing, BooleanSupplier closed, Executor io, EventAccess events,
      java.util.function.Consumer<Runnable> later, java.util.function.Consumer<String> advisedDenied) {
    String leaseName = settings.leaseName();
    LeaseAccess.Reviewer reviewer = reviewer(userClient, closing);
    Optional<LeaseRules> rules = rules(rulesClient, namespace, closing);
    if (rules.isPresent() && rules.get().grant(needs.required(), leaseName)) {
      // The usual case, in one round trip: the listed rules allow every required verb. Watch, if they do not
      // show it allowed, is asked once the first attempt is over, and never waited for.
      if (closing.getAsBoolean()) {
        return Optional.empty();
      }
      // Events the rules do not show allowed are not asked about here: the first Event write tells (a 403 is one
      // WARN with the rule to add, as a denied review is), and a review sent now would only race that write.
      List<LeaseNeeds.Ask> unshown = needs.advised().stream()
          .filter(ask -> !rules.get().allows(ask, leaseName)).toList();
      if (!unshown.isEmpty()) {
        LeaseAccess.Reviewer adviceReviewer = reviewer(userClient, closed);
        later.accept(() -> unshown.forEach(ask -> askAdvised(adviceReviewer, namespace, settings, needs, ask, closed,
            io, advisedDenied)));
      }
      return Optional.empty();
    }
    // Not shown allowed (a denial, an incomplete list, a failed review): one review per verb decides, as the
    // server answers each one. Unless the preflight is over already (the runner stops): then nothing more is asked.
    if (closing.getAsBoolean()) {
      return Optional.empty();
    }
    EventsReview eventsReview = null;
    if (events != null) {
      var question = events.question();
      // Bound to the runner's close, not the preflight's: it may still be waiting for a thread when the verdict
      // is given, and it is advice for the whole run (a review cancelled by the preflight's end was never sent).
      LeaseAccess.Reviewer adviceReviewer = reviewer(userClient, closed);
      eventsReview = new EventsReview(() -> adviceReviewer.allowed(question), events, closed);
      try {
        io.execute(eventsReview);
      } catch (RejectedExecutionException e) {
        // Never run on this thread: the runner would wait for advice. A refused write reports a denial instead.
        LOG.debug("Could not check RBAC for events: {}", e.toString());
        eventsReview = null;
      }
    }
    try {
      LeaseAccess access = LeaseAccess.review(namespace, leaseName, needs.required(), null, reviewer, io);
      Optional<LeaseAccessDeniedException> denied = check(namespace, settings, needs, closing, access, events,
          eventsReview);
      if (access.verdict() == LeaseAccess.Verdict.GRANTED && !closing.getAsBoolean() && !needs.advised().isEmpty()) {
        LeaseAccess.Reviewer adviceReviewer = reviewer(userClient, closed);
        later.accept(() -> needs.advised().forEach(ask -> askAdvised(adviceReviewer, namespace, settings, needs, ask,
            closed, io, advisedDenied)));
      }
      return denied;
    } finally {
      if (eventsReview != null && !eventsReview.wanted) {
        eventsReview.cancel(true);
      }
    }
  }

  /**
   * The {@code SelfSubjectRulesReview} of the namespace through the user's client, on this thread, given at most
   * {@value #RULES_REVIEW_TIMEOUT_MILLIS} ms and no retry; empty when it failed, timed out or the runner is {@code
   * closing} (then the reviews per verb decide, or nothing is reported).
   */
  // Package-private for RbacIT, which reads the rules on the real server as the preflight does.
  static Optional<LeaseRules> rules(KubernetesClient userClient, String namespace,
      BooleanSupplier closing) {
    if (closing.getAsBoolean()) {
      return Optional.empty();
    }
    java.util.concurrent.CompletableFuture<HttpResponse<String>> sent = null;
    try {
      KubernetesClient quick = rulesClient(userClient);
      // Sent and read raw, not through fabric8's typed model of the review (see LeaseRules): the same request
      // on the same HTTP client (the user's connections, credentials and impersonation), bounded here.
      HttpClient http = quick.getHttpClient();
      HttpRequest request = http.newHttpRequestBuilder().uri(LeaseHttp.apiRoot(quick) + LeaseRules.PATH)
          .timeout(RULES_REVIEW_TIMEOUT_MILLIS, TimeUnit.MILLISECONDS)
          .post("application/json", LeaseRules.questionJson(namespace)).build();
      sent = http.sendAsync(request, String.class);
      HttpResponse<String> answer = sent.get(RULES_REVIEW_TIMEOUT_MILLIS, TimeUnit.MILLISECONDS);
      if (!answer.isSuccessful()) {
        LOG.debug("Could not list the RBAC rules in namespace \"{}\": HTTP {}", namespace, answer.code());
        return Optional.empty();
      }
      return Optional.of(LeaseRules.parse(quick.getKubernetesSerialization().unmarshal(answer.body(), Map.class)));
    } catch (InterruptedException e) {
      sent.cancel(true);
      Thread.currentThread().interrupt(); // the runner closes, or the preflight's deadline passed
      return Optional.empty();
    } catch (ExecutionException | TimeoutException | RuntimeException e) {
      if (sent != null) {
        sent.cancel(true);
      }
      LOG.debug("Could not list the RBAC rules in namespace \"{}\": {}", namespace,
          e instanceof ExecutionException ? String.valueOf(e.getCause()) : e.toString());
      return Optional.empty();
    }
  }

  /**
   * The client the rules review goes through: the user's, with no retry (a server slow on this one question must
   * not hold the verdict longer than its short timeout before the access reviews are even asked; they decide
   * then). The review is sent raw, with that timeout ({@value #RULES_REVIEW_TIMEOUT_MILLIS} ms) on the request
   * itself, which fabric8's HTTP client takes over the client's own; only the retries come from the client's
   * request settings. So a client without retries is returned as it is: one this method made, or the transport's
   * Lease client, through which a runner sends it (no client derived for it at start). Any other is derived with
   * no retry and that timeout.
   */
  static KubernetesClient rulesClient(KubernetesClient userClient) {
    var requests = DerivedClients.requestConfig(userClient);
    if (requests != null && requests.getRequestRetryBackoffLimit() == 0) {
      return userClient;
    }
    return DerivedClients.derive(userClient, quick -> quick
        .withRequestTimeout(RULES_REVIEW_TIMEOUT_MILLIS)
        .withRequestRetryBackoffLimit(0));
  }

  /** One review through the user's client; refused once {@code closing} turns true. */
  private static LeaseAccess.Reviewer reviewer(java.util.function.Supplier<KubernetesClient> userClient,
      BooleanSupplier closing) {
    return review -> {
      if (closing.getAsBoolean()) {
        throw new CancellationException("the runner is closing");
      }
      var answer = userClient.get().authorization().v1().selfSubjectAccessReview().create(review);
      return answer == null || answer.getStatus() == null
          ? Optional.empty() : Optional.ofNullable(answer.getStatus().getAllowed());
    };
  }

  /**
   * Asks whether an advised verb is allowed ({@code watch} for an election, {@code delete} of its membership Lease
   * for a sharded runner), on {@code io}, never waited for: the verdict is given already, and a denial only warns
   * (followers then poll; a closed replica's membership Lease stays behind). Reported when it answers, unless the
   * runner closed; a review that failed, gave no verdict or found no free I/O thread is no denial.
   */
  private static void askAdvised(LeaseAccess.Reviewer reviewer, String namespace, LeaseSettings settings,
      LeaseNeeds needs, LeaseNeeds.Ask ask, BooleanSupplier closed, Executor io,
      java.util.function.Consumer<String> advisedDenied) {
    var question = LeaseAccess.question(namespace, ask, settings.leaseName());
    try {
      io.execute(() -> {
        boolean denied;
        try {
          denied = reviewer.allowed(question).map(allowed -> !allowed).orElse(false);
        } catch (Exception e) {
          if (e instanceof InterruptedException) {
            Thread.currentThread().interrupt();
          }
          LOG.debug("Could not check RBAC for {}: {}", ask.verb(), e.toString());
          return;
        }
        if (!denied || closed.getAsBoolean()) {
          return;
        }
        if ("delete".equals(ask.verb())) {
          LOG.warn("Leader election may not delete leases in namespace \"{}\": when this replica closes, its "
              + "membership Lease {} stays behind, released, instead of being deleted (one such Lease for each pod "
              + "name that ever ran, each listed and watched by every replica); the replica runs as before. To fix, "
              + "grant the Role this rule:\n{}", namespace, settings.leaseName(), LeaseNeeds.shardedLeaseRuleYaml());
        } else {
          LOG.warn("Leader election may not watch leases in namespace \"{}\": followers will notice a released "
              + "Lease only at their next poll, so a graceful hand-over takes up to one retry period ({}) instead "
              + "of milliseconds, and each follower reads the Lease every retry period instead of once per lease "
              + "duration ({}). To fix, grant the Role:\n{}", namespace, Durations.format(settings.retryPeriod()),
              Durations.format(settings.leaseDuration()), needs.roleYaml(namespace, settings.leaseName()));
        }
        advisedDenied.accept(ask.verb());
      });
    } catch (RejectedExecutionException e) {
      LOG.debug("Could not check RBAC for {}: {}", ask.verb(), e.toString());
    }
  }

  private static Optional<LeaseAccessDeniedException> check(String namespace, LeaseSettings settings,
      LeaseNeeds needs, BooleanSupplier closing, LeaseAccess access, EventAccess events, EventsReview eventsReview) {
    String leaseName = settings.leaseName();
    if (closing.getAsBoolean()) {
      // The runner is not going to contend: there is nothing to warn of.
      return Optional.empty();
    }
    switch (access.verdict()) {
      case DENIED -> {
        return Optional.of(new LeaseAccessDeniedException(namespace, leaseName, access.deniedVerbs(), needs));
      }
      case UNKNOWN -> LOG.warn("Could not check RBAC for leases: {}; contending anyway",
          access.unknownReason().orElseThrow());
      case GRANTED -> {
        if (eventsReview != null) {
          eventsReview.reportWhenAnswered();
        }
      }
    }
    return Optional.empty();
  }

  /**
   * The review of {@code create} on events: advice only, so nobody waits for it. Once the Lease's own access is
   * granted, a denial it answers (now or later) goes to the {@link EventAccess}, unless the runner closed first;
   * a review that failed or gave no verdict is no denial.
   */
  private static final class EventsReview extends FutureTask<Optional<Boolean>> {
    private final EventAccess events;
    private final BooleanSupplier closed;
    private final AtomicBoolean settled = new AtomicBoolean();
    private volatile boolean wanted;

    EventsReview(Callable<Optional<Boolean>> review, EventAccess events, BooleanSupplier closed) {
      super(review);
      this.events = events;
      this.closed = closed;
    }

    void reportWhenAnswered() {
      wanted = true;
      if (isDone()) {
        report();
      }
    }

    @Override
    protected void done() {
      if (wanted) {
        report();
      }
    }

    private void report() {
      if (!settled.compareAndSet(false, true) || isCancelled() || closed.getAsBoolean()) {
        return;
      }
      boolean denied;
      try {
        denied = get().map(allowed -> !allowed).orElse(false);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      } catch (Exception e) {
        LOG.debug("Could not check RBAC for events: {}", e.toString());
        return;
      }
      if (denied) {
        events.denied("the RBAC preflight found create on events denied");
      }
    }
  }
}
