package io.github.electionpolicy.benchmarks.sharding;

import io.github.electionpolicy.fabric8.LeadershipTerm;
import io.github.electionpolicy.fabric8.ShardService;
import io.github.electionpolicy.fabric8.Shards;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;

/**
 * A controller as the sharding benchmark runs it on one replica: a work queue of keys, a fixed number of workers
 * (as controllers bound their concurrent reconciles), a reconcile that waits a fixed time as an API call does, and
 * every owned key reconciled again as soon as it was (a resync loop, so the workers are always busy and the
 * throughput is the workers' capacity). A shard's {@code start} queues its keys; its {@code stop} returns once no
 * reconcile of it runs, and its queued keys are dropped when taken. Thread-safe.
 */
final class SyntheticController implements ShardService, AutoCloseable {

  private record Item(String key, int shard, LeadershipTerm term) {}

  private final String identity;
  private final List<List<String>> keysByShard = new ArrayList<>();
  private final long costMillis;
  private final Ledger ledger;
  private final Map<Integer, LeadershipTerm> terms = new ConcurrentHashMap<>();
  private final int[] inFlight;
  private final Object[] locks;
  private final LinkedBlockingQueue<Item> queue = new LinkedBlockingQueue<>();
  private final List<Thread> workers = new ArrayList<>();
  private volatile boolean closed;

  SyntheticController(String identity, Shards shards, List<String> keys, int workerCount, long costMillis,
      Ledger ledger) {
    this.identity = identity;
    this.costMillis = costMillis;
    this.ledger = ledger;
    this.inFlight = new int[shards.count()];
    this.locks = new Object[shards.count()];
    for (int i = 0; i < shards.count(); i++) {
      keysByShard.add(new ArrayList<>());
      locks[i] = new Object();
    }
    keys.forEach(key -> keysByShard.get(shards.shardOf(key)).add(key));
    for (int i = 0; i < workerCount; i++) {
      Thread worker = new Thread(this::work, identity + "-worker-" + i);
      worker.setDaemon(true);
      worker.start();
      workers.add(worker);
    }
  }

  @Override
  public void start(int shard, LeadershipTerm term) {
    ledger.shardStarted(shard);
    terms.put(shard, term);
    for (String key : keysByShard.get(shard)) {
      queue.add(new Item(key, shard, term));
    }
  }

  @Override
  public void stop(int shard) throws InterruptedException {
    synchronized (locks[shard]) {
      terms.remove(shard);
      while (inFlight[shard] > 0) {
        locks[shard].wait();
      }
    }
    ledger.shardStopped(shard);
  }

  private void work() {
    while (!closed) {
      Item item;
      try {
        item = queue.take();
      } catch (InterruptedException e) {
        return;
      }
      synchronized (locks[item.shard()]) {
        if (terms.get(item.shard()) != item.term() || !item.term().isValid()) {
          continue; // the shard moved, or its term ended: the next owner reconciles the key
        }
        inFlight[item.shard()]++;
      }
      try {
        ledger.begin(item.key(), identity);
        Thread.sleep(costMillis); // the reconcile's API call
        ledger.end(item.key(), identity);
      } catch (InterruptedException e) {
        return;
      } finally {
        synchronized (locks[item.shard()]) {
          inFlight[item.shard()]--;
          locks[item.shard()].notifyAll();
        }
      }
      queue.add(item);
    }
  }

  @Override
  public void close() {
    closed = true;
    workers.forEach(Thread::interrupt);
  }
}
