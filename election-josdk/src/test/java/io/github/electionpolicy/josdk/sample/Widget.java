package io.github.electionpolicy.josdk.sample;

import io.fabric8.kubernetes.api.model.Namespaced;
import io.fabric8.kubernetes.client.CustomResource;
import io.fabric8.kubernetes.model.annotation.Group;
import io.fabric8.kubernetes.model.annotation.Version;

/** The sample operator's one custom resource: {@code widgets.example.electionpolicy.io/v1}, namespaced. */
@Group("example.electionpolicy.io")
@Version("v1")
public class Widget extends CustomResource<WidgetSpec, Void> implements Namespaced {

  private static final long serialVersionUID = 1L;

  /** A widget named {@code name} in {@code namespace} with the given colour. */
  public static Widget named(String namespace, String name, String color) {
    Widget widget = new Widget();
    widget.getMetadata().setNamespace(namespace);
    widget.getMetadata().setName(name);
    WidgetSpec spec = new WidgetSpec();
    spec.setColor(color);
    widget.setSpec(spec);
    return widget;
  }
}
