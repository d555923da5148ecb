package io.github.electionpolicy.fabric8;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

/**
 * The {@link LeaseTransport} of production runners: the Lease requests go out asynchronously, with fabric8's
 * {@code HttpClient.sendAsync}, and no thread waits for their answers. They go through a client derived from the
 * user's that keeps its HTTP client, credentials and impersonation but none of its retries, and each is bounded by
 * {@link LeaseSettings#requestTimeout()}; {@value SharedPools#IO_MAX_CALLS} at most are in flight in the JVM
 * ({@link SharedPools#leaseRequests()}), {@value SharedPools#ELECTION_MAX_CALLS} of them at most this transport's.
 * Remembers the last Lease it saw, so a write keeps the labels, annotations and owner references a user put on it. Writes the leadership Events on the Lease (its uid from the last Lease
 * seen, so {@code kubectl describe lease} finds them) the same way. The follower's watch opens the same way too,
 * with no thread waiting for the server's answer; the preflight runs on the shared workers ({@link SharedPools#io()}),
 * a one-off per runner. The requests' mechanics are
 * {@link LeaseHttp}'s and the watch is {@link LeaseWatch}'s; this class keeps what an answer means for the Lease,
 * the preflight and the close.
 */
final class Fabric8LeaseTransport implements LeaseTransport {

  private static final int REVIEW_TIMEOUT_MILLIS = 10_000;
  /**
   * How long the whole preflight may take before its verdict is taken as unknown (the runner contends, as after
   * reviews that failed): its rules review and then its access reviews, each with its own timeout, plus a margin.
   * A bound of its own, on the loop's clock, because a review's timeout is the HTTP client's to enforce: at 1,000
   * elections starting at once with fabric8's default executors, 4 rules reviews were seen never to return
   * (fabric8's blocking {@code create} waiting on a future the JDK client never completed), and those elections
   * never contended.
   */
  static final long PREFLIGHT_DEADLINE_MILLIS = RbacPreflight.RULES_REVIEW_TIMEOUT_MILLIS + REVIEW_TIMEOUT_MILLIS
      + 3_000;
  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(Fabric8LeaseTransport.class);

  private final KubernetesClient client;
  private final KubernetesClient userClient;
  // The access reviews' client, derived at the first access review (see reviewClient()); null until then.
  private volatile KubernetesClient reviewClient;
  private final String namespace;
  private final String name;
  private final LeaseSettings settings;
  private final ExecutorService io;
  private final LeaseHttp http;
  private final LeaseWatch watch;
  private final KubernetesSerialization serialization;
  private final AtomicBoolean closed = new AtomicBoolean();
  private final Set<Call> inFlight = ConcurrentHashMap.newKeySet();
  // The Lease as last read or written, untyped (LeaseRecords): never changed once seen, read by other threads.
  private volatile Map<String, Object> lastSeen;
  private final EventAccess eventAccess;
  // Put in the metadata of every write (the sharded runner's label, a member's leaving mark); empty for an election.
  private volatile WriteMetadata writeMetadata = new WriteMetadata(Map.of(), Map.of());
  // This runner's share of the JVM's Lease-call places: its requests and watch openings take theirs through it, and
  // its tasks on io (the preflight, its reviews) one of it too, io taking theirs of the JVM's (finding 3, h-attack8).
  private final SharedPools.InFlight share;
  // The preflight's advice kept off the start path (the watch review), sent at firstAttemptOver.
  private final java.util.concurrent.atomic.AtomicReference<Runnable> afterFirstAttempt =
      new java.util.concurrent.atomic.AtomicReference<>();
  private volatile long preflightDeadlineNanos = TimeUnit.MILLISECONDS.toNanos(PREFLIGHT_DEADLINE_MILLIS);
  // What the preflight asks for: an election's verbs, unless a sharded runner's assembly said otherwise.
  private volatile LeaseNeeds needs = LeaseNeeds.election();
  // The advised verbs the preflight found denied and warned of (written on an I/O thread, read on the loop).
  private final Set<String> advisedDenied = ConcurrentHashMap.newKeySet();

  Fabric8LeaseTransport(KubernetesClient userClient, String namespace, LeaseSettings settings, ExecutorService io) {
    this(userClient, namespace, settings, io, SharedPools.handOver(), SharedPools.leaseRequests(),
        SharedPools.eventWrites());
  }

  /**
   * With its own executors and bounds, for tests: {@code handOver} runs the short task that hands a request (which
   * holds its place in {@code requests} or {@code eventWrites} already) to the HTTP client.
   */
  Fabric8LeaseTransport(KubernetesClient userClient, String namespace, LeaseSettings settings, ExecutorService io,
      java.util.concurrent.Executor handOver, SharedPools.InFlight requests, SharedPools.InFlight eventWrites) {
    int timeoutMillis = (int) Math.min(Integer.MAX_VALUE, settings.requestTimeout().toMillis());
    // A derived client shares the user's HTTP client and request settings (impersonation included, so the
    // Lease calls run as the same user as the preflight's reviews) but not its retry and timeout settings:
    // the retries of a default client would keep a cut-off leader believing it leads long after its deadline.
    this.client = DerivedClients.derive(userClient, config -> config
        .withRequestTimeout(timeoutMillis)
        .withRequestRetryBackoffLimit(0)
        .withWatchReconnectInterval(Math.max(100, timeoutMillis / 4))
        .withWatchReconnectLimit(-1));
    // The access reviews' client is derived only when one is asked (reviewClient()), on an I/O worker: the usual
    // preflight is the rules review alone, sent raw through the Lease calls' client (no retries; the request
    // carries its own 2 s timeout, see RbacPreflight.rulesClient), so a start derives one client, not three.
    this.userClient = userClient;
    this.namespace = namespace;
    this.name = settings.leaseName();
    this.settings = settings;
    this.io = io;
    this.eventAccess = settings.leadershipEvents() ? new EventAccess(namespace, name) : null;
    // This runner's share of the JVM's places: one whose requests never end (an interceptor of its client that
    // hangs) is refused its own next call, not every other runner's reads and renewals.
    SharedPools.InFlight ownRequests = requests.share(SharedPools.ELECTION_MAX_CALLS,
        "Lease calls of election " + namespace + "/" + name);
    this.share = ownRequests;
    this.http = new LeaseHttp(client, namespace, name, timeoutMillis, handOver, ownRequests, eventWrites, closed,
        inFlight);
    this.watch = new LeaseWatch(client, namespace, name, io, handOver, ownRequests, closed, inFlight, true);
    this.serialization = client.getKubernetesSerialization();
  }

  /**
   * Puts {@code labels} and {@code annotations} in the metadata of every write from now on (over the values of the
   * same keys; the Lease's others kept): a shard's or a member's label, a member's leaving mark.
   */
  void writeMetadata(Map<String, String> labels, Map<String, String> annotations) {
    this.writeMetadata = new WriteMetadata(Map.copyOf(labels), Map.copyOf(annotations));
  }

  /** The labels and annotations of every write, set together so that a write never has one without the other. */
  private record WriteMetadata(Map<String, String> labels, Map<String, String> annotations) {}

  private Map<String, Object> leaseToWrite(LeaseRecord record) {
    WriteMetadata metadata = writeMetadata;
    return LeaseRecords.lease(record, lastSeen, namespace, name, metadata.labels(), metadata.annotations());
  }

  /**
   * Makes the preflight ask what {@code needs} lists instead of an election's verbs: a sharded runner's Leases
   * ({@link LeaseNeeds#sharded}); set before the runner starts.
   */
  void needs(LeaseNeeds needs) {
    this.needs = java.util.Objects.requireNonNull(needs, "needs");
  }

  /**
   * The client of the preflight's access reviews (typed {@code SelfSubjectAccessReview}s, and the advice asked after
   * the verdict), derived from the user's at the first one: a one-off off the renew path that may take the time a
   * cold client needs to connect, so each review is bounded (10 s) and never retried, and a server that does not
   * answer holds an I/O thread that long only. Not derived at all when the rules review decides and shows every
   * advised verb allowed, the usual start.
   */
  private KubernetesClient reviewClient() {
    KubernetesClient made = reviewClient;
    if (made == null) {
      synchronized (this) {
        made = reviewClient;
        if (made == null) {
          made = DerivedClients.derive(userClient, config -> config
              .withRequestTimeout(REVIEW_TIMEOUT_MILLIS)
              .withRequestRetryBackoffLimit(0));
          reviewClient = made;
        }
      }
    }
    return made;
  }

  /** Whether the access reviews' client was derived; for tests. */
  boolean reviewClientDerived() {
    return reviewClient != null;
  }

  /** The derived client the Lease calls use. */
  KubernetesClient client() {
    return client;
  }

  @Override
  public Call read(Answered done) {
    return http.send("get Lease", http::getLease, (code, body) -> {
      if (code == LeaseCallFailed.NOT_FOUND) {
        // As fabric8's get(): a missing Lease is an answer, not a failure.
        return new LeaseStep.Answer.Missing();
      }
      Map<String, Object> lease = answeredLease(body);
      LeaseStep.Answer found = new LeaseStep.Answer.Found(LeaseRecords.record(lease));
      lastSeen = lease;
      return found;
    }, done);
  }

  @Override
  public Call create(LeaseRecord record, Answered done) {
    Map<String, Object> lease = leaseToWrite(record);
    return http.send("create Lease", () -> http.createLease(lease), this::written, done);
  }

  @Override
  public Call update(LeaseRecord record, Answered done) {
    if (record.resourceVersion() == null) {
      // A PUT without a resourceVersion is applied unconditionally, over whoever holds the Lease: never sent.
      LeaseCallFailed refused = new LeaseCallFailed("update Lease refused: the record has no resourceVersion", null,
          0);
      done.answered(LeaseHttp.failed(refused), refused);
      return () -> { };
    }
    Map<String, Object> lease = leaseToWrite(record);
    return http.send("update Lease", () -> http.updateLease(lease), this::written, done);
  }

  private LeaseStep.Answer written(int code, String body) {
    Map<String, Object> lease = answeredLease(body);
    LeaseStep.Answer written = new LeaseStep.Answer.Written(LeaseRecords.record(lease));
    lastSeen = lease;
    return written;
  }

  /**
   * The Lease a successful answer holds, or an {@link IllegalStateException} (a failed call) for a body that is no
   * Lease of this name with a resourceVersion ({@code {}}, a {@code Status}, nothing): taken as a Lease, it would
   * look free (no holder) and be written without a resourceVersion, which the server applies unconditionally. Its
   * {@code kind} is not judged: a real server stores only Leases at the Lease path, and an object of another kind
   * planted there (which only a mock can do) is read as the blocking client read it, a Lease whose holder is
   * respected like any other.
   */
  @SuppressWarnings("unchecked")
  private Map<String, Object> answeredLease(String body) {
    Map<String, Object> lease = body == null || body.isBlank() ? null : serialization.unmarshal(body, Map.class);
    if (lease == null || !name.equals(LeaseRecords.name(lease)) || LeaseRecords.resourceVersion(lease) == null) {
      String shown = body == null ? "" : body.strip();
      throw new IllegalStateException("the answer is no Lease " + namespace + "/" + name + ": \""
          + (shown.length() > 200 ? shown.substring(0, 200) + "..." : shown) + "\"");
    }
    return lease;
  }

  /**
   * Deletes the Lease with preconditions on the released record's resourceVersion and, when the Lease last seen is
   * that very record, its uid (see {@link LeaseHttp#deleteLease}). A record without a resourceVersion is never
   * sent: the delete would be unconditional.
   */
  @Override
  public Call delete(LeaseRecord released, Answered done) {
    if (released.resourceVersion() == null) {
      LeaseCallFailed refused = new LeaseCallFailed("delete Lease refused: the record has no resourceVersion", null,
          0);
      done.answered(LeaseHttp.failed(refused), refused);
      return () -> { };
    }
    Map<String, Object> seen = lastSeen;
    String uid = seen != null && released.resourceVersion().equals(LeaseRecords.resourceVersion(seen))
        ? LeaseRecords.uid(seen) : null;
    return http.send("delete Lease", () -> http.deleteLease(released.resourceVersion(), uid),
        (code, body) -> new LeaseStep.Answer.Missing(), done);
  }

  /** Watches the Lease: see {@link LeaseWatch#open}. */
  @Override
  public Call watch(WatchEvents events) {
    return watch.open(events);
  }

  @Override
  public Call preflight(Consumer<Optional<LeaseAccessDeniedException>> done, Consumer<Throwable> failed) {
    AtomicBoolean over = new AtomicBoolean();
    Future<?>[] future = new Future<?>[1];
    Thread[] own = new Thread[1];
    RunnerLoop.Timer[] deadline = new RunnerLoop.Timer[1];
    Call call = new Call() {
      @Override
      public void cancel() {
        if (over.compareAndSet(false, true)) {
          interrupt(future, own);
        }
        inFlight.remove(this);
        synchronized (deadline) {
          if (deadline[0] != null) {
            deadline[0].cancel();
          }
        }
      }
    };
    inFlight.add(call);
    Runnable timedOut = () -> {
      if (!over.compareAndSet(false, true)) {
        return;
      }
      interrupt(future, own);
      inFlight.remove(call);
      done.accept(Optional.empty());
      // Not on the loop, which runs this timer: the line goes where user code goes, or nowhere if no thread can
      // be had (the verdict is given already).
      try {
        SharedPools.userCode().execute(() -> LOG.warn("The RBAC preflight of Lease {}/{} did not end within {} ms "
            + "(its reviews got no answer); contending without its verdict, as after reviews that failed", namespace,
            name, TimeUnit.NANOSECONDS.toMillis(preflightDeadlineNanos)));
      } catch (RuntimeException | Error e) {
        // no line
      }
    };
    synchronized (deadline) {
      deadline[0] = RunnerLoop.shared().schedule(preflightDeadlineNanos, timedOut);
    }
    try {
      executeInShare(() -> runPreflight(call, over, done, failed), future);
    } catch (RejectedExecutionException e) {
      // Every I/O thread is busy: the preflight is never skipped, it runs on a thread of its own (a one-off).
      Thread thread = new Thread(() -> runPreflight(call, over, done, failed), "election-preflight");
      thread.setDaemon(true);
      own[0] = thread;
      thread.start();
    }
    return call;
  }

  /**
   * Runs one of the preflight's reviews on {@code io} as a call of this transport until it ends, so the close
   * interrupts it: the access reviews the preflight waits for, and the advice it leaves running after its verdict
   * (watch; create on events), which would otherwise outlive the runner, holding a worker and a place among the
   * Lease calls for as long as a review that never returns (finding 2 of h-attack7). Refused once closed.
   */
  private void review(Runnable task) {
    Review review = new Review(task);
    inFlight.add(review);
    if (closed.get()) {
      // Closed meanwhile: the close may not have seen it (the same check as LeaseHttp.send's).
      review.cancel();
      throw new RejectedExecutionException("the election is closing");
    }
    try {
      executeInShare(review, null);
    } catch (RejectedExecutionException e) {
      inFlight.remove(review);
      throw e;
    }
  }

  /**
   * Runs {@code task} on {@code io} holding a place of this runner's share until its worker is done with it (the
   * pool holds its place among the JVM's meanwhile), cancelled before it ran included; {@code future}, if given,
   * receives the task's future before it can run. Refused when the share is full or the pool refuses.
   */
  private void executeInShare(Runnable task, Future<?>[] future) {
    if (!share.tryAcquireHere()) {
      throw new RejectedExecutionException(share.refusal());
    }
    java.util.concurrent.RunnableFuture<?> run = task instanceof java.util.concurrent.RunnableFuture<?> given
        ? given : new java.util.concurrent.FutureTask<Void>(task, null);
    if (future != null) {
      future[0] = run;
    }
    try {
      io.execute(() -> {
        try {
          run.run();
        } finally {
          share.releaseHere();
        }
      });
    } catch (RejectedExecutionException | Error e) {
      share.releaseHere();
      if (future != null) {
        future[0] = null;
      }
      throw e;
    }
  }

  /** A review on {@code io} among the calls in flight until it ends; its cancel interrupts it. */
  private final class Review extends java.util.concurrent.FutureTask<Void> implements Call {
    Review(Runnable task) {
      super(task, null);
    }

    @Override
    public void cancel() {
      cancel(true);
    }

    @Override
    protected void done() {
      inFlight.remove(this);
    }
  }

  /** The preflight's worker, or its own thread, is interrupted out of a review that may never return. */
  private static void interrupt(Future<?>[] future, Thread[] own) {
    if (future[0] != null) {
      future[0].cancel(true);
    }
    if (own[0] != null) {
      own[0].interrupt();
    }
  }

  /** Sets the preflight's bound (see {@link #PREFLIGHT_DEADLINE_MILLIS}); for tests. */
  void preflightDeadline(java.time.Duration bound) {
    this.preflightDeadlineNanos = bound.toNanos();
  }

  @Override
  public boolean warnedDenied(String verb) {
    return advisedDenied.contains(verb);
  }

  @Override
  public void firstAttemptOver() {
    Runnable advice = afterFirstAttempt.getAndSet(null);
    if (advice != null && !closed.get()) {
      advice.run(); // hands the review to the I/O pool: never blocks the loop
    }
  }

  private void runPreflight(Call call, AtomicBoolean over, Consumer<Optional<LeaseAccessDeniedException>> done,
      Consumer<Throwable> failed) {
    Optional<LeaseAccessDeniedException> denied;
    try {
      denied = RbacPreflight.check(this::reviewClient, client, namespace, settings, needs,
          () -> over.get() || closed.get(),
          closed::get, this::review, eventAccess, afterFirstAttempt::set, advisedDenied::add);
    } catch (RuntimeException | Error e) {
      if (finish(call, over)) {
        failed.accept(e);
      }
      return;
    }
    if (finish(call, over)) {
      done.accept(denied);
    }
  }

  /**
   * Ends a preflight that ran to its end: takes its call out and cancels its deadline's timer (through the call's
   * cancel, which interrupts nothing once {@code over} is set). Whether this end is the preflight's outcome: false
   * when the deadline or a close came first.
   */
  private static boolean finish(Call call, AtomicBoolean over) {
    boolean first = over.compareAndSet(false, true);
    call.cancel();
    return first;
  }

  /**
   * Creates the Event asynchronously, as the Lease requests, with the Lease calls' client (its request timeout, no
   * retries), bounded apart from them ({@link SharedPools#eventWrites()}); not among the calls in flight, so a close
   * neither cuts it short nor refuses it. A 403 goes to the {@link EventAccess}, which warns once; any other
   * failure is logged at DEBUG.
   */
  @Override
  public void recordEvent(LeadershipEvent event, Runnable done) {
    http.recordEvent(event, () -> event(event), eventAccess, done);
  }

  /**
   * The core/v1 Event, shaped as client-go's recorder writes it, on the Lease as it was last seen; untyped, as the
   * Lease is written ({@link LeaseRecords}), since the first Event goes out just as the first term begins, when
   * fabric8's typed model would build its serializers on a core the new leader needs.
   */
  Map<String, Object> event(LeadershipEvent event) {
    String when = event.time().truncatedTo(ChronoUnit.SECONDS).toString();
    Map<String, Object> involved = new java.util.LinkedHashMap<>();
    involved.put("apiVersion", "coordination.k8s.io/v1");
    involved.put("kind", "Lease");
    involved.put("namespace", namespace);
    involved.put("name", name);
    String uid = LeaseRecords.uid(lastSeen);
    if (uid != null) {
      involved.put("uid", uid);
    }
    Map<String, Object> body = new java.util.LinkedHashMap<>();
    body.put("apiVersion", "v1");
    body.put("kind", "Event");
    body.put("metadata", Map.of("name", event.name(), "namespace", namespace));
    body.put("involvedObject", involved);
    body.put("type", event.kind().type());
    body.put("reason", LeadershipEvent.REASON);
    body.put("message", event.message());
    body.put("firstTimestamp", when);
    body.put("lastTimestamp", when);
    body.put("count", 1);
    body.put("source", Map.of("component", event.identity()));
    body.put("reportingComponent", LeadershipEvent.REPORTING_COMPONENT);
    body.put("reportingInstance", event.identity());
    return body;
  }

  @Override
  public void close() {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    for (Call call : inFlight.toArray(new Call[0])) {
      call.cancel();
    }
    inFlight.clear();
  }

  /** The longest wait of one request, for logs. */
  Duration requestTimeout() {
    return settings.requestTimeout();
  }
}
