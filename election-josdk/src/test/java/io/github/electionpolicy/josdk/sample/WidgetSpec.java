package io.github.electionpolicy.josdk.sample;

/** What a widget asks for. */
public class WidgetSpec {

  private String color;

  public String getColor() {
    return color;
  }

  public void setColor(String color) {
    this.color = color;
  }
}
