package io.github.electionpolicy.fabric8;

/**
 * Opens the one list and watch of a sharded controller's Leases for a {@link ShardDriver}, reporting to a {@link
 * ShardLeaseSource.Sink} from any thread: in production {@link ShardLeaseSource} (one informer), in the simulation
 * the simulated server's.
 */
interface ShardViewSource {

  /**
   * Opens the list and watch.
   *
   * @param sink where what it lists and sees is reported, from any thread
   * @return the open list and watch
   */
  View open(ShardLeaseSource.Sink sink);

  /** An open list and watch; on the loop. */
  interface View extends AutoCloseable {
    /** Closes it: nothing is reported after. */
    @Override
    void close();

    /**
     * Lists and watches again at once if the list and watch is down (it failed, and waits for its back-off to try
     * again), reporting {@link ShardLeaseSource.Sink#listed} once that list was taken in; returns whether it did.
     */
    default boolean relist() {
      return false;
    }

    /**
     * Lists and watches again at once through a new list and watch, even if this one counts itself as watching (its
     * watch may deliver nothing without fabric8 knowing: see {@link ShardViewFeed#checkSilence}), reporting {@link
     * ShardLeaseSource.Sink#listed} once that list was taken in; returns whether it did (not after {@link #close}).
     */
    default boolean restart() {
      return false;
    }

    /**
     * Which list and watch this is now: a number that each {@link #relist} or {@link #restart} that did list and
     * watch again makes larger, as {@link ShardLeaseSource.Sink#listed(int)} names it.
     */
    default int generation() {
      return 0;
    }
  }
}
