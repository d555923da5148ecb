package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.api.model.coordination.v1.LeaseBuilder;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.RequestConfigBuilder;
import io.fabric8.kubernetes.client.jdkhttp.JdkHttpClientFactory;
import io.fabric8.mockwebserver.http.Dispatcher;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import io.github.electionpolicy.testsupport.Await;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The one list and watch of a sharded controller's Leases, over the real fabric8 client and informer against the
 * mock API server in CRUD mode: it reports the controller's labelled Leases (and no other), their changes and
 * deletions, and the leaving mark, each dated by the driver's ticker; the view built from it sees the controller.
 */
class ShardLeaseSourceTest {

  @RegisterExtension
  final MockApi api = new MockApi();

  private final ShardLeases leases = new ShardLeases("orders", 4);
  private final Map<String, ShardLeaseView.Listed> seen = new ConcurrentHashMap<>();
  private final Map<String, Long> deletedAt = new ConcurrentHashMap<>();
  private final AtomicLong ticks = new AtomicLong();
  private final ShardLeaseSource.Sink sink = new ShardLeaseSource.Sink() {
    @Override
    public void changed(ShardLeaseView.Listed listed, long arrivedNanos) {
      seen.put(listed.name(), listed);
    }

    @Override
    public void deleted(String name, long arrivedNanos) {
      seen.remove(name);
      deletedAt.put(name, arrivedNanos);
    }
  };

  /**
   * fabric8's informer hands each listed Lease to the handler on an executor of its own, so its start may complete
   * (the list stored) before they were all handed over: {@code listed()} must come after every Lease of the list, as
   * the view's first plan is made from what was reported by then. A sink that takes a millisecond for each Lease, as
   * a busy process may, so that the hand-over lags behind the list.
   */
  @Test
  void aListIsReportedListedOnlyAfterEveryLeaseOfItWasReported() {
    ShardLeases many = new ShardLeases("orders", 64);
    for (int shard = 0; shard < 64; shard++) {
      create(lease(many.shardLease(shard), "pod-a", true, false));
    }
    java.util.concurrent.atomic.AtomicInteger reportedWhenListed = new java.util.concurrent.atomic.AtomicInteger(-1);
    ShardLeaseSource.Sink counting = new ShardLeaseSource.Sink() {
      @Override
      public void changed(ShardLeaseView.Listed l, long arrivedNanos) {
        java.util.concurrent.locks.LockSupport.parkNanos(1_000_000L);
        seen.put(l.name(), l);
      }

      @Override
      public void deleted(String name, long arrivedNanos) {}

      @Override
      public void listed() {
        reportedWhenListed.compareAndSet(-1, seen.size());
      }
    };
    try (ShardLeaseSource source = ShardLeaseSource.open(api.client(), MockApi.NAMESPACE, many,
        MockApi.RETRY_PERIOD, ticks::incrementAndGet, counting)) {
      // A list left unanswered (fabric8 7.6.1 with the mock server under load, about once in 15 runs: nothing
      // reported, no failure, no retry) is listed again as the runner's silence check does (ShardViewFeed): once,
      // after 5 s of nothing. The state and the informer's threads are in the message if even that does not list.
      long opened = System.nanoTime();
      java.util.concurrent.atomic.AtomicBoolean restarted = new java.util.concurrent.atomic.AtomicBoolean();
      Await.until("the first list", () -> {
        if (seen.isEmpty() && System.nanoTime() - opened > 5_000_000_000L && restarted.compareAndSet(false, true)) {
          source.restart();
        }
        return source.synced();
      }, () -> seen.size() + " reported; restarted " + restarted + "; " + source.describe() + "\n"
          + informerThreads());
      assertThat(reportedWhenListed.get()).as("Leases reported when the list was reported listed").isEqualTo(64);
    }
  }

  /**
   * While the Leases change, are deleted and created again, and the list and watch is restarted (some restarts while
   * the list before was still being reported), every restart's list is still reported listed, and once the changes
   * stop what was reported is what the server holds: no Lease of a list is left waiting for an event that never comes.
   */
  @Test
  void everyListIsReportedListedWhileTheLeasesChangeAndTheSourceRestarts() throws Exception {
    ShardLeases many = new ShardLeases("orders", 32);
    for (int shard = 0; shard < 32; shard++) {
      create(lease(many.shardLease(shard), "pod-a", true, false));
    }
    java.util.concurrent.atomic.AtomicInteger lists = new java.util.concurrent.atomic.AtomicInteger();
    ShardLeaseSource.Sink slow = new ShardLeaseSource.Sink() {
      @Override
      public void changed(ShardLeaseView.Listed l, long arrivedNanos) {
        java.util.concurrent.locks.LockSupport.parkNanos(200_000L);
        seen.put(l.name(), l);
      }

      @Override
      public void deleted(String name, long arrivedNanos) {
        seen.remove(name);
      }

      @Override
      public void listed() {
        lists.incrementAndGet();
      }
    };
    java.util.concurrent.atomic.AtomicBoolean churning = new java.util.concurrent.atomic.AtomicBoolean(true);
    java.util.Random random = new java.util.Random(7);
    Thread churn = new Thread(() -> {
      int round = 0;
      while (churning.get()) {
        String name = many.shardLease(random.nextInt(32));
        try {
          if (round++ % 5 == 0) {
            api.client().leases().inNamespace(MockApi.NAMESPACE).withName(name).delete();
            create(lease(name, "pod-" + round, true, false));
          } else {
            api.client().leases().inNamespace(MockApi.NAMESPACE).withName(name)
                .edit(l -> new LeaseBuilder(l).editSpec().withHolderIdentity("pod-" + random.nextInt(100)).endSpec()
                    .build());
          }
        } catch (RuntimeException e) {
          // a Lease deleted meanwhile: the next round
        }
      }
    });
    churn.start();
    try (ShardLeaseSource source = ShardLeaseSource.open(api.client(), MockApi.NAMESPACE, many,
        MockApi.RETRY_PERIOD, ticks::incrementAndGet, slow)) {
      for (int restart = 0; restart < 6; restart++) {
        Thread.sleep(restart % 2 == 0 ? 2 : 150);
        int before = lists.get();
        assertThat(source.restart()).isTrue();
        if (restart % 2 == 1) {
          Await.until("the list of restart " + restart, () -> lists.get() > before, seen::size);
        }
      }
      int before = lists.get();
      assertThat(source.restart()).isTrue();
      Await.until("the last restart's list", () -> lists.get() > before, seen::size);
      churning.set(false);
      churn.join();
      Map<String, String> stored = new java.util.TreeMap<>();
      api.client().leases().inNamespace(MockApi.NAMESPACE).list().getItems()
          .forEach(l -> stored.put(l.getMetadata().getName(), l.getMetadata().getResourceVersion()));
      Await.until("the server's Leases reported", () -> {
        Map<String, String> reported = new java.util.TreeMap<>();
        seen.forEach((name, l) -> reported.put(name, l.record().resourceVersion()));
        return reported.equals(stored);
      }, seen::keySet);
    } finally {
      churning.set(false);
      churn.join();
    }
  }

  @Test
  void reportsTheControllersLeasesTheirChangesAndDeletionsAndNothingElse() {
    create(lease(leases.memberLease("pod-a"), "pod-a", true, false));
    create(lease(leases.shardLease(0), "pod-a", true, false));
    create(lease("orders-shard-1", "pod-b", false, false)); // not labelled: not the controller's
    create(lease(new ShardLeases("billing", 4).shardLease(0), "pod-c", false, false).edit().editMetadata()
        .addToLabels(ShardLeases.LABEL, "billing").endMetadata().build());

    try (ShardLeaseSource source = ShardLeaseSource.open(api.client(), MockApi.NAMESPACE, leases,
        MockApi.RETRY_PERIOD, ticks::incrementAndGet, sink)) {
      Await.until("the first list", () -> source.synced() && seen.size() == 2, seen::keySet);
      assertThat(seen).containsOnlyKeys(leases.memberLease("pod-a"), leases.shardLease(0));
      assertThat(seen.get(leases.shardLease(0)).record().holder()).isEqualTo("pod-a");

      create(lease(leases.memberLease("pod-b"), "pod-b", true, false));
      api.client().leases().inNamespace(MockApi.NAMESPACE).withName(leases.memberLease("pod-a"))
          .edit(l -> lease(leases.memberLease("pod-a"), "pod-a", true, true));
      api.client().leases().inNamespace(MockApi.NAMESPACE).withName(leases.shardLease(0)).delete();

      Await.until("the changes", () -> seen.containsKey(leases.memberLease("pod-b"))
          && seen.get(leases.memberLease("pod-a")).leaving() && deletedAt.containsKey(leases.shardLease(0)),
          seen::toString);
      ShardLeaseView view = new ShardLeaseView(leases, 15_000_000_000L);
      seen.values().forEach(listed -> view.changed(listed, 0));
      assertThat(view.view(1).liveMembers()).as("pod-a leaves").containsExactly("pod-b");
      assertThat(view.view(1).holders()).isEmpty();
    }
  }

  /**
   * A restart (ShardViewFeed.checkSilence) or relist lists from the API server's storage, not from its watch cache: a
   * list with {@code resourceVersion=0} may be answered from a cache that lags what the view already saw, and would
   * take the view back to older records. fabric8 sends no resourceVersion for an informer given an initial state,
   * which a new informer here is (the Leases as last reported); only the very first list, with nothing seen yet, may
   * be served from the cache. A stop-33 review note said otherwise; this pins what is sent.
   */
  @Test
  void aRestartOrRelistListsFromStorageNotFromTheWatchCache() throws Exception {
    create(lease(leases.memberLease("pod-a"), "pod-a", true, false));
    List<String> lists = new CopyOnWriteArrayList<>();
    io.fabric8.kubernetes.client.http.Interceptor probe = new io.fabric8.kubernetes.client.http.Interceptor() {
      @Override
      public void before(io.fabric8.kubernetes.client.http.BasicBuilder builder,
          io.fabric8.kubernetes.client.http.HttpRequest request, RequestTags tags) {
        String query = request.uri().getRawQuery();
        if (query != null && query.contains("labelSelector") && !query.contains("watch=true")) {
          lists.add(query);
        }
      }
    };
    Config config = new ConfigBuilder(api.client().getConfiguration()).build();
    try (KubernetesClient user = new KubernetesClientBuilder().withConfig(config)
            .withHttpClientFactory(new JdkHttpClientFactory())
            .withHttpClientBuilderConsumer(builder -> builder.addOrReplaceInterceptor("probe", probe)).build();
        ShardLeaseSource source = ShardLeaseSource.open(user, MockApi.NAMESPACE, leases, MockApi.RETRY_PERIOD,
            ticks::incrementAndGet, sink)) {
      Await.until("the first list", () -> source.synced() && seen.size() == 1, seen::keySet);
      assertThat(source.restart()).isTrue();
      Await.until("the restart's list", () -> lists.size() == 2, lists::toString);
      assertThat(source.restart()).isTrue();
      Await.until("the second restart's list", () -> lists.size() == 3, lists::toString);
      assertThat(lists.get(0)).as("the first list (the probe sees the parameter when it is sent)")
          .contains("resourceVersion=0");
      assertThat(lists.subList(1, 3)).as("the restarts' lists").noneMatch(query -> query.contains("resourceVersion="));
    }
  }

  /**
   * The informer's client of its own (DerivedClients.forInformer) lists and watches as the user's client does, with
   * its credentials and the impersonation of a client the user derived with {@code newClient(RequestConfig)}; its
   * back-off starts at a 32nd of the retry period, in its Config (where fabric8's informer reads it) and its request
   * settings (where a watch's reconnect does), while the user's client keeps its own and stays open and usable after
   * the source closed.
   */
  @Test
  void listsAndWatchesAsTheUsersClientWithTheRunnersBackoffAndLeavesTheUsersClientAsItWas() throws Exception {
    List<String> seen = new CopyOnWriteArrayList<>();
    try (MockApi server = new MockApi(delegate -> new Dispatcher() {
      @Override
      public MockResponse dispatch(RecordedRequest request) {
        String path = request.getPath() == null ? "" : request.getPath();
        if (path.contains("labelSelector")) {
          seen.add((path.contains("watch=true") ? "watch" : "list") + " " + request.getHeader("Authorization") + " "
              + request.getHeader("Impersonate-User"));
        }
        return delegate.dispatch(request);
      }
    })) {
      Config config = new ConfigBuilder(Config.empty()).withMasterUrl(server.url()).withNamespace(MockApi.NAMESPACE)
          .withOauthToken("s3cret").withWatchReconnectInterval(60_000).build();
      try (KubernetesClient base = new KubernetesClientBuilder().withConfig(config)
          .withHttpClientFactory(new JdkHttpClientFactory()).build()) {
        KubernetesClient user = base.newClient(new RequestConfigBuilder(base.getConfiguration().getRequestConfig())
            .withImpersonateUsername("orders").build()).adapt(KubernetesClient.class);
        server.client().leases().inNamespace(MockApi.NAMESPACE)
            .resource(lease(leases.memberLease("pod-a"), "pod-a", true, false)).create();

        try (ShardLeaseSource source = ShardLeaseSource.open(user, MockApi.NAMESPACE, leases, Duration.ofSeconds(2),
            ticks::incrementAndGet, sink)) {
          Await.until("the list and the watch", () -> source.synced() && seen.contains(
              "watch Bearer s3cret orders"), seen::toString);
          assertThat(seen).contains("list Bearer s3cret orders");
          assertThat(source.client().getConfiguration().getWatchReconnectInterval()).isEqualTo(2_000 / 32);
          assertThat(DerivedClients.requestConfig(source.client()).getWatchReconnectInterval()).isEqualTo(2_000 / 32);
          assertThat(DerivedClients.requestConfig(source.client()).getRequestRetryBackoffLimit()).isZero();
        }

        assertThat(seen).allSatisfy(line -> assertThat(line).endsWith(" Bearer s3cret orders"));
        assertThat(base.getConfiguration().getWatchReconnectInterval()).isEqualTo(60_000);
        assertThat(DerivedClients.requestConfig(user).getWatchReconnectInterval()).isEqualTo(60_000);
        assertThat(user.leases().inNamespace(MockApi.NAMESPACE).list().getItems()).hasSize(1);
      }
    }
  }

  /**
   * A list and watch opened while the API server refuses its lists (an outage, as for a replica started during one)
   * reports the failure and waits for its back-off: a 32nd of the retry period, here 20 minutes, so 37.5 s, longer
   * than any wait of this test ({@link Await#GENEROUS}).
   * {@code relist()}, which the runner calls at the first answer of the server to one of its Lease calls
   * (ShardViewFeed.answered), lists at once through a new informer: the Leases are reported, then the list, with one
   * list sent; a second {@code relist()} while it watches does nothing, and the replaced informer sends nothing more.
   */
  @Test
  void aRelistAfterAFailureListsAtOnceRatherThanAtTheBackoffsNextTry() {
    java.util.concurrent.atomic.AtomicBoolean down = new java.util.concurrent.atomic.AtomicBoolean(true);
    java.util.concurrent.atomic.AtomicInteger lists = new java.util.concurrent.atomic.AtomicInteger();
    java.util.concurrent.atomic.AtomicInteger failures = new java.util.concurrent.atomic.AtomicInteger();
    java.util.concurrent.atomic.AtomicInteger listed = new java.util.concurrent.atomic.AtomicInteger();
    try (MockApi server = new MockApi(delegate -> new Dispatcher() {
      @Override
      public MockResponse dispatch(RecordedRequest request) {
        String path = request.getPath() == null ? "" : request.getPath();
        if (path.contains("labelSelector") && !path.contains("watch=true")) {
          lists.incrementAndGet();
          if (down.get()) {
            return new MockResponse().setResponseCode(503).setHeader("Content-Type", "application/json")
                .setBody("{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"code\":503}");
          }
        }
        return delegate.dispatch(request);
      }
    })) {
      server.client().leases().inNamespace(MockApi.NAMESPACE)
          .resource(lease(leases.memberLease("pod-a"), "pod-a", true, false)).create();
      ShardLeaseSource.Sink counting = new ShardLeaseSource.Sink() {
        @Override
        public void changed(ShardLeaseView.Listed l, long arrivedNanos) {
          sink.changed(l, arrivedNanos);
        }

        @Override
        public void deleted(String name, long arrivedNanos) {
          sink.deleted(name, arrivedNanos);
        }

        @Override
        public void listed() {
          listed.incrementAndGet();
        }

        @Override
        public void failed() {
          failures.incrementAndGet();
        }
      };
      try (ShardLeaseSource source = ShardLeaseSource.open(server.client(), MockApi.NAMESPACE, leases,
          Duration.ofMinutes(20), ticks::incrementAndGet, counting)) {
        Await.until("the first list failed", () -> failures.get() == 1, () -> lists + " lists");
        assertThat(source.synced()).isFalse();
        int before = lists.get();
        down.set(false); // the server is back; the informer's own next try is 37.5 s away

        assertThat(source.relist()).as("relisted: it was not watching").isTrue();
        Await.until("the relist's list", () -> listed.get() == 1 && seen.containsKey(leases.memberLease("pod-a")),
            () -> lists + " lists, seen " + seen.keySet());
        assertThat(source.synced()).isTrue();

        server.client().leases().inNamespace(MockApi.NAMESPACE)
            .resource(lease(leases.memberLease("pod-b"), "pod-b", true, false)).create();
        Await.until("the new informer's watch reports a change", () -> seen.containsKey(leases.memberLease("pod-b")),
            seen::keySet);
        assertThat(source.relist()).as("no relist while it watches").isFalse();
        assertThat(lists.get() - before).as("lists sent since the server came back").isEqualTo(1);
        assertThat(failures.get()).as("failures reported (the replaced informer's retries send nothing)")
            .isEqualTo(1);
      }
    }
  }

  /**
   * fabric8's informer lists again on its own when a 410 Gone ends its watch, and reports what changed since as plain
   * changes, with no failure: the view would take a member that left meanwhile as live until the list's deletions
   * come last, and a leaver could name it as a successor (the shard would then wait out its Lease). The source
   * reports a failure before such a list's first change, so the view counts itself out of the server's order. Here the
   * first watch delivers nothing until it is ended with a 410, so the changes made meanwhile reach the informer only
   * through the list it then makes.
   */
  @Test
  void aListTheInformerMakesOnItsOwnAfterA410IsReportedAsAFailureBeforeItsChanges() {
    java.util.concurrent.CountDownLatch gone = new java.util.concurrent.CountDownLatch(1);
    java.util.concurrent.atomic.AtomicInteger watches = new java.util.concurrent.atomic.AtomicInteger();
    try (MockApi server = new MockApi(delegate -> new Dispatcher() {
      @Override
      public MockResponse dispatch(RecordedRequest request) {
        String path = request.getPath() == null ? "" : request.getPath();
        if (path.contains("labelSelector") && path.contains("watch=true") && watches.getAndIncrement() == 0) {
          return new MockResponse().withWebSocketUpgrade(new io.fabric8.mockwebserver.http.WebSocketListener() {
            @Override
            public void onOpen(io.fabric8.mockwebserver.http.WebSocket webSocket,
                io.fabric8.mockwebserver.http.Response response) {
              Thread ender = new Thread(() -> {
                try {
                  if (gone.await(30, java.util.concurrent.TimeUnit.SECONDS)) {
                    webSocket.send("{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"apiVersion\":\"v1\","
                        + "\"status\":\"Failure\",\"reason\":\"Expired\",\"message\":\"too old resource version\","
                        + "\"code\":410}}");
                    webSocket.close(1000, "gone");
                  }
                } catch (InterruptedException e) {
                  Thread.currentThread().interrupt();
                }
              }, "gone-watch");
              ender.setDaemon(true);
              ender.start();
            }
          });
        }
        return delegate.dispatch(request);
      }
    })) {
      String a = leases.memberLease("pod-a");
      String b = leases.memberLease("pod-b");
      server.client().leases().inNamespace(MockApi.NAMESPACE).resource(lease(a, "pod-a", true, false)).create();
      List<String> heard = new CopyOnWriteArrayList<>();
      ShardLeaseSource.Sink recording = new ShardLeaseSource.Sink() {
        @Override
        public void changed(ShardLeaseView.Listed l, long arrivedNanos) {
          heard.add("changed " + l.name());
        }

        @Override
        public void deleted(String name, long arrivedNanos) {
          heard.add("deleted " + name);
        }

        @Override
        public void listed() {
          heard.add("listed");
        }

        @Override
        public void failed() {
          heard.add("failed");
        }
      };
      try (ShardLeaseSource source = ShardLeaseSource.open(server.client(), MockApi.NAMESPACE, leases,
          MockApi.RETRY_PERIOD, ticks::incrementAndGet, recording)) {
        Await.until("the first list", () -> heard.contains("listed"), heard::toString);
        // Made while the first watch delivers nothing: only a list can show them.
        server.client().leases().inNamespace(MockApi.NAMESPACE).resource(lease(b, "pod-b", true, false)).create();
        server.client().leases().inNamespace(MockApi.NAMESPACE).withName(a).delete();
        gone.countDown();
        Await.until("the informer's own list after the 410", () -> heard.contains("deleted " + a), heard::toString);

        assertThat(heard).as("what the sink heard").containsExactly("changed " + a, "listed", "failed",
            "changed " + b, "deleted " + a);
      }
    }
  }

  /**
   * Finding h-attack15 (1): the runner opens the source and calls {@code relist()} on its loop (ShardViewFeed.open,
   * ShardViewFeed.answered), and a new informer's {@code start()} sends its list from the calling thread; the pace
   * (fresh, or restarted) let it go at once, so the list went to the HTTP client on the loop, holding it (and, for a
   * relist, the source's lock) while the user's interceptors ran, which may refresh a token for seconds: every runner
   * of the JVM shares that loop. A list asked for on the loop is handed to a worker, as a held one and every Lease
   * request is.
   */
  @Test
  void aSourceOpenedAndRelistedOnTheLoopSendsItsListsFromAWorker() throws Exception {
    java.util.concurrent.atomic.AtomicBoolean down = new java.util.concurrent.atomic.AtomicBoolean(true);
    java.util.concurrent.atomic.AtomicInteger failures = new java.util.concurrent.atomic.AtomicInteger();
    java.util.concurrent.atomic.AtomicInteger listed = new java.util.concurrent.atomic.AtomicInteger();
    List<Thread> listThreads = new CopyOnWriteArrayList<>();
    io.fabric8.kubernetes.client.http.Interceptor probe = new io.fabric8.kubernetes.client.http.Interceptor() {
      @Override
      public void before(io.fabric8.kubernetes.client.http.BasicBuilder builder,
          io.fabric8.kubernetes.client.http.HttpRequest request, RequestTags tags) {
        String query = request.uri().getRawQuery();
        if (query != null && query.contains("labelSelector") && !query.contains("watch=true")) {
          listThreads.add(Thread.currentThread());
        }
      }
    };
    try (MockApi server = new MockApi(delegate -> new Dispatcher() {
      @Override
      public MockResponse dispatch(RecordedRequest request) {
        String path = request.getPath() == null ? "" : request.getPath();
        if (path.contains("labelSelector") && !path.contains("watch=true") && down.get()) {
          return new MockResponse().setResponseCode(503).setHeader("Content-Type", "application/json")
              .setBody("{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"code\":503}");
        }
        return delegate.dispatch(request);
      }
    })) {
      Config config = new ConfigBuilder(Config.empty()).withMasterUrl(server.url()).withNamespace(MockApi.NAMESPACE)
          .build();
      ShardLeaseSource.Sink counting = new ShardLeaseSource.Sink() {
        @Override
        public void changed(ShardLeaseView.Listed l, long arrivedNanos) {}

        @Override
        public void deleted(String name, long arrivedNanos) {}

        @Override
        public void listed() {
          listed.incrementAndGet();
        }

        @Override
        public void failed() {
          failures.incrementAndGet();
        }
      };
      java.util.concurrent.CompletableFuture<Thread> loopThread = new java.util.concurrent.CompletableFuture<>();
      RunnerLoop.shared().execute(() -> loopThread.complete(Thread.currentThread()));
      try (KubernetesClient user = new KubernetesClientBuilder().withConfig(config)
              .withHttpClientFactory(new JdkHttpClientFactory())
              .withHttpClientBuilderConsumer(builder -> builder.addOrReplaceInterceptor("probe", probe)).build()) {
        // Opened on the loop too, as the driver does (once the preflight let the membership runner contend).
        java.util.concurrent.CompletableFuture<ShardLeaseSource> opened =
            new java.util.concurrent.CompletableFuture<>();
        RunnerLoop.shared().execute(() -> opened.complete(ShardLeaseSource.open(user, MockApi.NAMESPACE, leases,
            Duration.ofMinutes(10), ticks::incrementAndGet, counting)));
        try (ShardLeaseSource source = opened.get(10, java.util.concurrent.TimeUnit.SECONDS)) {
          Await.until("the first list failed", () -> failures.get() == 1, listThreads::toString);
          assertThat(listThreads).as("threads the first list was sent from").hasSize(1)
              .doesNotContain(loopThread.get());
          down.set(false);
          java.util.concurrent.CompletableFuture<Boolean> relisted = new java.util.concurrent.CompletableFuture<>();
          RunnerLoop.shared().execute(() -> relisted.complete(source.relist()));
          assertThat(relisted.get(10, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
          Await.until("the relist's list", () -> listed.get() == 1, listThreads::toString);
          assertThat(listThreads).as("threads the lists were sent from").hasSize(2).doesNotContain(loopThread.get());
        }
      }
    }
  }

  /**
   * Finding h-attack17 (1): {@code relist()} runs on the runners' loop (ShardViewFeed.answered) and stopped the
   * replaced informer there; fabric8's {@code Reflector.stop()} takes the reflector's monitor, which its {@code
   * startWatcher} holds while the new watch goes through the user's interceptors (their {@code before} runs on the
   * calling thread). So a relist that came while the replaced informer was opening its watch after a list of its own
   * back-off (not watching yet, so replaced) held the loop, every runner of the JVM, for as long as an interceptor of
   * the user's took there (a token refresh, a credential plugin). Here the replaced informer's watch is held in an
   * interceptor until the test lets it go: the loop must run the relist and a task after it meanwhile. The replaced
   * informer is stopped from a worker, and by {@code close()} at the latest.
   */
  @Test
  void aRelistWhileTheReplacedInformerOpensItsWatchDoesNotHoldTheLoop() throws Exception {
    java.util.concurrent.atomic.AtomicBoolean down = new java.util.concurrent.atomic.AtomicBoolean(true);
    java.util.concurrent.atomic.AtomicInteger failures = new java.util.concurrent.atomic.AtomicInteger();
    java.util.concurrent.atomic.AtomicInteger listed = new java.util.concurrent.atomic.AtomicInteger();
    java.util.concurrent.atomic.AtomicBoolean holdOne = new java.util.concurrent.atomic.AtomicBoolean(true);
    java.util.concurrent.CountDownLatch holding = new java.util.concurrent.CountDownLatch(1);
    java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
    io.fabric8.kubernetes.client.http.Interceptor slowWatch = new io.fabric8.kubernetes.client.http.Interceptor() {
      @Override
      public void before(io.fabric8.kubernetes.client.http.BasicBuilder builder,
          io.fabric8.kubernetes.client.http.HttpRequest request, RequestTags tags) {
        String query = request.uri().getRawQuery();
        if (query != null && query.contains("labelSelector") && query.contains("watch=true")
            && holdOne.compareAndSet(true, false)) {
          holding.countDown();
          try {
            release.await(Await.GENEROUS.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        }
      }
    };
    try (MockApi server = new MockApi(delegate -> new Dispatcher() {
      @Override
      public MockResponse dispatch(RecordedRequest request) {
        String path = request.getPath() == null ? "" : request.getPath();
        if (path.contains("labelSelector") && !path.contains("watch=true") && down.get()) {
          return new MockResponse().setResponseCode(503).setHeader("Content-Type", "application/json")
              .setBody("{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"code\":503}");
        }
        return delegate.dispatch(request);
      }
    })) {
      Config config = new ConfigBuilder(Config.empty()).withMasterUrl(server.url()).withNamespace(MockApi.NAMESPACE)
          .build();
      ShardLeaseSource.Sink counting = new ShardLeaseSource.Sink() {
        @Override
        public void changed(ShardLeaseView.Listed l, long arrivedNanos) {}

        @Override
        public void deleted(String name, long arrivedNanos) {}

        @Override
        public void listed() {
          listed.incrementAndGet();
        }

        @Override
        public void failed() {
          failures.incrementAndGet();
        }
      };
      try (KubernetesClient user = new KubernetesClientBuilder().withConfig(config)
              .withHttpClientFactory(new JdkHttpClientFactory())
              .withHttpClientBuilderConsumer(builder -> builder.addOrReplaceInterceptor("slow", slowWatch)).build();
          // A back-off from 100 ms: the first informer lists again on its own soon after the server is back.
          ShardLeaseSource source = ShardLeaseSource.open(user, MockApi.NAMESPACE, leases, Duration.ofMillis(3_200),
              ticks::incrementAndGet, counting)) {
        try {
          Await.until("the first list failed", () -> failures.get() >= 1, failures::toString);
          down.set(false);
          assertThat(holding.await(Await.GENEROUS.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS))
              .as("the first informer listed on its own and opens its watch").isTrue();

          java.util.concurrent.CompletableFuture<Boolean> relisted = new java.util.concurrent.CompletableFuture<>();
          RunnerLoop.shared().execute(() -> relisted.complete(source.relist()));
          java.util.concurrent.CompletableFuture<Boolean> after = new java.util.concurrent.CompletableFuture<>();
          RunnerLoop.shared().execute(() -> after.complete(true));
          assertThat(after.get(10, java.util.concurrent.TimeUnit.SECONDS))
              .as("the loop ran a task after the relist while the replaced informer's watch was held").isTrue();
          assertThat(relisted.getNow(false)).as("relisted: the first informer was not watching").isTrue();
          // Let the replaced informer's watch go before waiting for the relist's list: the hold blocks a thread of
          // fabric8's (the one that opens that watch), which the new informer's list and watch may need as well (a
          // clean-clone CI run waited 30 s here once). What this test is about, the loop, was checked above.
          release.countDown();
          Await.until("the relist's list", () -> listed.get() == 1, listed::toString);
        } finally {
          release.countDown();
        }
      }
    }
  }

  @Test
  void theBackoffStartsAtA32ndOfTheRetryPeriodSoItsCapIsTheRetryPeriod() {
    assertThat(ShardLeaseSource.reconnectMillis(Duration.ofSeconds(2))).isEqualTo(62);
    assertThat(ShardLeaseSource.reconnectMillis(Duration.ofMillis(200))).isEqualTo(6);
    assertThat(ShardLeaseSource.reconnectMillis(Duration.ofMillis(20))).as("at least 1 ms").isEqualTo(1);
    assertThat(ShardLeaseSource.reconnectMillis(Duration.ofMillis(2_000)) * ShardLeaseSource.BACKOFF_CAP_FACTOR)
        .isLessThanOrEqualTo(2_000);
  }

  private void create(Lease lease) {
    api.client().leases().inNamespace(MockApi.NAMESPACE).resource(lease).create();
  }

  private Lease lease(String name, String holder, boolean labelled, boolean leaving) {
    LeaseBuilder builder = new LeaseBuilder().withNewMetadata().withName(name).withNamespace(MockApi.NAMESPACE)
        .endMetadata().withNewSpec().withHolderIdentity(holder).withLeaseDurationSeconds(15).endSpec();
    if (labelled) {
      builder.editMetadata().addToLabels(ShardLeases.LABEL, leases.labelValue()).endMetadata();
    }
    if (leaving) {
      builder.editMetadata().addToAnnotations(ShardLeases.LEAVING, "true").endMetadata();
    }
    return builder.build();
  }

  /** The stacks of the threads that run fabric8's informers or this source, for a failure message. */
  private static String informerThreads() {
    StringBuilder out = new StringBuilder();
    Thread.getAllStackTraces().forEach((thread, stack) -> {
      String text = java.util.Arrays.toString(stack);
      if (text.contains("informers") || text.contains("ShardLeaseSource") || text.contains("SerialExecutor")) {
        out.append(thread.getName()).append(' ').append(thread.getState()).append('\n');
        for (StackTraceElement frame : stack) {
          out.append("    at ").append(frame).append('\n');
        }
      }
    });
    return out.toString();
  }
}
