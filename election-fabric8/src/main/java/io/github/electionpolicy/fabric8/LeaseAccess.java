package io.github.electionpolicy.fabric8;

import io.fabric8.kubernetes.api.model.authorization.v1.SelfSubjectAccessReview;
import io.fabric8.kubernetes.api.model.authorization.v1.SelfSubjectAccessReviewBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.FutureTask;
import java.util.concurrent.RejectedExecutionException;

/**
 * What the adapter needs from RBAC, and what RBAC lets this process do with its Lease. This class owns both
 * halves: the verbs ({@link #REQUIRED_VERBS}, {@link #ADVISED_VERBS}) and the least-privilege Role that grants
 * them ({@link #roleYaml(String, String)}, the same rules as {@code docs/rbac.yaml}); and the review, as the
 * API server answers {@code SelfSubjectAccessReview}s: one per required verb on {@code coordination.k8s.io}
 * leases in the namespace (by name, except {@code create}, which RBAC cannot restrict by name), then one per
 * advised verb, which is advice only. A review changes nothing on the server.
 *
 * <p>{@link ElectionRunner} runs this review after it started, before it contends (its RBAC preflight), sending the four reviews at
 * once on its Lease I/O pool and reading them in the order above, so the preflight costs about one round trip:
 * {@link Verdict#DENIED} stops the runner before it contends, with a {@link LeaseAccessDeniedException} in
 * {@link ElectionRunner#startupFailure()}; {@link Verdict#UNKNOWN} warns and contends anyway. Operator tools
 * call {@link #review(KubernetesClient, String, String)} to show the same verdict without starting anything:
 *
 * <pre>{@code
 * LeaseAccess access = LeaseAccess.review(client, "shop", "orders-controller");
 * if (access.verdict() == LeaseAccess.Verdict.DENIED) {
 *   System.err.println(LeaseAccess.roleYaml("shop", "orders-controller"));
 * }
 * }</pre>
 *
 * <p>Instances are immutable values and thread-safe.
 *
 * @param verdict granted, denied or unknown
 * @param deniedVerbs the required verbs the server denied; non-empty exactly when the verdict is {@link
 *     Verdict#DENIED}
 * @param watchDenied whether the server denied {@code watch} (followers then notice a released Lease only at
 *     their next poll); {@code false} unless the verdict is {@link Verdict#GRANTED}
 * @param unknownReason why there is no verdict; present exactly when the verdict is {@link Verdict#UNKNOWN}
 */
public record LeaseAccess(
    Verdict verdict, List<String> deniedVerbs, boolean watchDenied, Optional<String> unknownReason) {

  /**
   * The verbs leader election needs on {@code leases}: read, create when missing, renew (and release, which is
   * an update). Without one of them the runner refuses to start.
   */
  public static final List<String> REQUIRED_VERBS = List.of("get", "create", "update");

  /**
   * The verbs leader election uses when it may: {@code watch}, so a follower takes over a released Lease at
   * once instead of at its next poll. Without it the runner warns and contends anyway.
   */
  public static final List<String> ADVISED_VERBS = List.of("watch");

  /**
   * The verbs the runner uses on core {@code events} in the Lease's namespace: {@code create}, to record its
   * leadership changes as Events on the Lease ({@link LeaseSettings#leadershipEvents()}). Advice only, like
   * {@link #ADVISED_VERBS}: without it the runner warns once and the election runs as before, unrecorded.
   */
  public static final List<String> EVENT_VERBS = List.of("create");

  /** The Role rule that grants {@link #EVENT_VERBS}, as it appears in {@link #roleYaml(String, String)}. */
  static final String EVENTS_RULE_YAML = "  - apiGroups: [\"\"]\n"
      + "    resources: [\"events\"]\n"
      + "    verbs: [\"create\"]\n";

  // RBAC cannot restrict create by name: the object does not exist yet.
  private static final String UNNAMEABLE_VERB = "create";

  /** The verdict of the reviews. */
  public enum Verdict {
    /** Every required verb is allowed. */
    GRANTED,
    /** At least one required verb is denied: the runner stops before it contends. */
    DENIED,
    /** The review API refused, failed or gave no verdict: the adapter warns and contends anyway. */
    UNKNOWN
  }

  /**
   * Validates that the components agree with the verdict.
   *
   * @param verdict granted, denied or unknown
   * @param deniedVerbs the denied required verbs
   * @param watchDenied whether watch was denied
   * @param unknownReason why there is no verdict
   * @throws NullPointerException if a component is {@code null}
   * @throws IllegalArgumentException if the components disagree with the verdict
   */
  public LeaseAccess {
    Objects.requireNonNull(verdict, "verdict");
    deniedVerbs = List.copyOf(deniedVerbs);
    Objects.requireNonNull(unknownReason, "unknownReason");
    if ((verdict == Verdict.DENIED) == deniedVerbs.isEmpty()
        || (verdict == Verdict.UNKNOWN) != unknownReason.isPresent()
        || (watchDenied && verdict != Verdict.GRANTED)) {
      throw new IllegalArgumentException("a " + verdict + " LeaseAccess cannot have deniedVerbs="
          + deniedVerbs + ", watchDenied=" + watchDenied + ", unknownReason=" + unknownReason);
    }
  }

  /**
   * The least-privilege Role that grants what leader election needs, as YAML: {@code create} on leases (RBAC
   * cannot scope create to a name), the other {@link #REQUIRED_VERBS} and the {@link #ADVISED_VERBS} on this
   * Lease only, and {@code create} on events (the {@link #EVENT_VERBS}, for the leadership Events; an Event's
   * name is new each time, so it cannot be scoped either). The same rules as {@code docs/rbac.yaml}, which a test checks against what the adapter sends.
   *
   * <pre>{@code
   * System.out.print(LeaseAccess.roleYaml("shop", "orders-controller"));
   * }</pre>
   *
   * @param namespace the namespace of the Lease
   * @param leaseName the name of the Lease, used in the Role's name and its resourceNames
   * @return a Role manifest
   * @throws NullPointerException if an argument is {@code null}
   */
  public static String roleYaml(String namespace, String leaseName) {
    Objects.requireNonNull(namespace, "namespace");
    Objects.requireNonNull(leaseName, "leaseName");
    List<String> byName = new ArrayList<>();
    for (String verb : REQUIRED_VERBS) {
      if (!UNNAMEABLE_VERB.equals(verb)) {
        byName.add(verb);
      }
    }
    byName.addAll(ADVISED_VERBS);
    return "apiVersion: rbac.authorization.k8s.io/v1\n"
        + "kind: Role\n"
        + "metadata:\n"
        + "  name: " + leaseName + "-leader-election\n"
        + "  namespace: " + namespace + "\n"
        + "rules:\n"
        + "  - apiGroups: [\"coordination.k8s.io\"]\n"
        + "    resources: [\"leases\"]\n"
        + "    verbs: [\"" + UNNAMEABLE_VERB + "\"]\n"
        + "  - apiGroups: [\"coordination.k8s.io\"]\n"
        + "    resources: [\"leases\"]\n"
        + "    resourceNames: [\"" + leaseName + "\"]\n"
        + "    verbs: [\"" + String.join("\", \"", byName) + "\"]\n"
        + EVENTS_RULE_YAML;
  }

  /** Asks the server one review; returns its verdict, empty when it gave none; throws when it failed. */
  @FunctionalInterface
  interface Reviewer {
    Optional<Boolean> allowed(SelfSubjectAccessReview review) throws Exception;
  }

  /**
   * Reviews what the client's identity may do with the Lease.
   *
   * @param client the client whose credentials are reviewed; its own timeouts and retries apply
   * @param namespace the namespace of the Lease
   * @param leaseName the name of the Lease
   * @return the verdict; failures of the review API give {@link Verdict#UNKNOWN}, never an exception
   */
  public static LeaseAccess review(KubernetesClient client, String namespace, String leaseName) {
    Objects.requireNonNull(client, "client");
    return review(namespace, leaseName, review -> {
      SelfSubjectAccessReview answer = client.authorization().v1().selfSubjectAccessReview().create(review);
      return answer == null || answer.getStatus() == null
          ? Optional.empty() : Optional.ofNullable(answer.getStatus().getAllowed());
    });
  }

  static LeaseAccess review(String namespace, String leaseName, Reviewer reviewer) {
    // No executor: one after another on the calling thread, each review only when the verdict needs it.
    return review(namespace, leaseName, reviewer, null);
  }

  /**
   * The same review with every question sent at once, on {@code executor} but the first, which the calling thread
   * asks itself while the others are in flight: the reviews are independent and
   * change nothing, so the verdict is the one {@link #review(String, String, Reviewer)} gives, read in the same
   * order (the first required verb without an answer makes it {@link Verdict#UNKNOWN} with that verb's reason,
   * then the denied verbs, then watch), in about one round trip instead of four. A question no thread of the
   * executor has taken yet when its answer is needed runs on the calling thread, so a busy or saturated executor
   * (every thread of it a preflight waiting for its own questions) delays the review but never deadlocks it. The
   * questions still open when the verdict is known are cancelled. An interrupt while waiting makes the verdict
   * {@link Verdict#UNKNOWN} and keeps the thread interrupted, as an interrupted review does one at a time.
   * With a {@code null} executor each question is sent on the calling thread only when the verdict needs it:
   * one after another, none after the first without an answer, watch only when the required verbs are granted.
   */
  static LeaseAccess review(String namespace, String leaseName, Reviewer reviewer, Executor executor) {
    return review(namespace, leaseName, reviewer, executor, true);
  }

  /**
   * As {@link #review(String, String, Reviewer, Executor)}; without {@code askWatch} only the required verbs are
   * asked and {@link #watchDenied()} is {@code false} (the RBAC preflight asks watch apart, after its verdict: it
   * only decides a warning). With an executor the first question runs on the calling thread, which would only
   * wait for it otherwise: one thread hand-over fewer.
   */
  static LeaseAccess review(String namespace, String leaseName, Reviewer reviewer, Executor executor,
      boolean askWatch) {
    LeaseNeeds election = LeaseNeeds.election();
    return review(namespace, leaseName, election.required(), askWatch ? election.advised().get(0) : null, reviewer,
        executor);
  }

  /**
   * As {@link #review(String, String, Reviewer, Executor, boolean)}, of the questions {@code required} (a runner's
   * {@link LeaseNeeds#required()}: their denied verbs are {@link #deniedVerbs()}) and, if not {@code null}, of
   * {@code advised}, whose denial is {@link #watchDenied()}.
   */
  static LeaseAccess review(String namespace, String leaseName, List<LeaseNeeds.Ask> required,
      LeaseNeeds.Ask advised, Reviewer reviewer, Executor executor) {
    Objects.requireNonNull(namespace, "namespace");
    Objects.requireNonNull(leaseName, "leaseName");
    List<LeaseNeeds.Ask> asks = new ArrayList<>(required);
    if (advised != null) {
      asks.add(advised);
    }
    List<FutureTask<Optional<Boolean>>> questions = new ArrayList<>();
    for (LeaseNeeds.Ask ask : asks) {
      SelfSubjectAccessReview question = question(namespace, ask, leaseName);
      questions.add(new FutureTask<>(() -> reviewer.allowed(question)));
    }
    if (executor != null) {
      // The first is left to this thread: its answer is the first one read.
      for (FutureTask<Optional<Boolean>> question : questions.subList(1, questions.size())) {
        try {
          executor.execute(question);
        } catch (RejectedExecutionException e) {
          // Left to run on this thread when its answer is needed.
        }
      }
    }
    try {
      List<String> denied = new ArrayList<>();
      for (int i = 0; i < required.size(); i++) {
        String verb = required.get(i).verb();
        Optional<Boolean> allowed;
        try {
          allowed = answer(questions.get(i));
        } catch (Exception e) {
          if (e instanceof InterruptedException) {
            Thread.currentThread().interrupt();
          }
          return unknown("the SelfSubjectAccessReview for \"" + verb + "\" failed: " + describe(e));
        }
        if (allowed.isEmpty()) {
          return unknown("the SelfSubjectAccessReview for \"" + verb + "\" gave no verdict");
        }
        if (!allowed.get()) {
          denied.add(verb);
        }
      }
      if (!denied.isEmpty()) {
        return new LeaseAccess(Verdict.DENIED, denied, false, Optional.empty());
      }
      boolean watchDenied = false;
      try {
        if (advised != null) {
          watchDenied = answer(questions.get(required.size())).map(allowed -> !allowed).orElse(false);
        }
      } catch (Exception e) {
        if (e instanceof InterruptedException) {
          Thread.currentThread().interrupt();
        }
        watchDenied = false;
      }
      return new LeaseAccess(Verdict.GRANTED, List.of(), watchDenied, Optional.empty());
    } finally {
      for (FutureTask<Optional<Boolean>> question : questions) {
        question.cancel(true);
      }
    }
  }

  /**
   * The answer to one question: run here if no thread has taken it yet, else awaited. Throws what the reviewer
   * threw (an {@link Error} as itself), or {@link InterruptedException}.
   */
  private static Optional<Boolean> answer(FutureTask<Optional<Boolean>> question) throws Exception {
    // A no-op when a thread of the executor has started it (or it is done): then its result is awaited.
    question.run();
    try {
      return question.get();
    } catch (ExecutionException e) {
      Throwable cause = e.getCause();
      if (cause instanceof Error error) {
        throw error;
      }
      throw cause instanceof Exception exception ? exception : e;
    } catch (CancellationException e) {
      throw new InterruptedException("the review was cancelled");
    }
  }

  /** The status line of an API error, not fabric8's whole request dump. */
  private static String describe(Exception e) {
    if (e instanceof KubernetesClientException && ((KubernetesClientException) e).getCode() > 0) {
      KubernetesClientException failure = (KubernetesClientException) e;
      String message = failure.getStatus() != null && failure.getStatus().getMessage() != null
          ? failure.getStatus().getMessage() : failure.getMessage();
      return "HTTP " + failure.getCode() + " (" + message + ")";
    }
    return e.getMessage();
  }

  private static LeaseAccess unknown(String reason) {
    return new LeaseAccess(Verdict.UNKNOWN, List.of(), false, Optional.of(reason));
  }

  /** The review of one verb on the Lease (by name, except {@code create}). */
  static SelfSubjectAccessReview question(String namespace, String leaseName, String verb) {
    return question(namespace, new LeaseNeeds.Ask(verb, !UNNAMEABLE_VERB.equals(verb)), leaseName);
  }

  /** The review of one question: its verb on the Lease by name, or on every Lease of the namespace. */
  static SelfSubjectAccessReview question(String namespace, LeaseNeeds.Ask ask, String leaseName) {
    return new SelfSubjectAccessReviewBuilder()
        .withNewSpec()
        .withNewResourceAttributes()
        .withGroup("coordination.k8s.io")
        .withResource("leases")
        .withVerb(ask.verb())
        .withNamespace(namespace)
        .withName(ask.name(leaseName))
        .endResourceAttributes()
        .endSpec()
        .build();
  }
}
