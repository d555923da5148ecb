package io.github.electionpolicy.testkit.fabric8;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import java.net.ConnectException;
import java.net.Socket;
import java.net.URI;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.platform.testkit.engine.EngineTestKit;

/** The extension's life cycle: a fresh Lease API for each test, shut down after it. */
class LeaseApiExtensionTest {

  @Test
  void eachTestGetsAFreshServerThatIsShutDownAfterIt() {
    TwoTests.urls.clear();

    EngineTestKit.engine("junit-jupiter").selectors(selectClass(TwoTests.class)).execute().testEvents()
        .assertStatistics(stats -> stats.succeeded(2).failed(0));

    assertThat(TwoTests.urls).hasSize(2).doesNotHaveDuplicates();
    assertThat(TwoTests.urls).allSatisfy(url -> {
      URI uri = URI.create(url);
      assertThatThrownBy(() -> new Socket(uri.getHost(), uri.getPort()).close()).isInstanceOf(ConnectException.class);
    });
  }

  @Test
  void outsideATestTheExtensionSaysHowToUseIt() {
    LeaseApiExtension api = LeaseApiExtension.create();

    assertThatThrownBy(api::client)
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("register it with @RegisterExtension");
  }

  /** Run by {@link #eachTestGetsAFreshServerThatIsShutDownAfterIt}. */
  static class TwoTests {

    static final List<String> urls = new CopyOnWriteArrayList<>();

    @RegisterExtension
    final LeaseApiExtension api = LeaseApiExtension.of(LeaseApi.builder().target(ApiServerTarget.embedded()));

    @Test
    void first() {
      urls.add(api.url());
      api.client().leases().list();
    }

    @Test
    void second() {
      urls.add(api.url());
      api.client().leases().list();
    }
  }
}
