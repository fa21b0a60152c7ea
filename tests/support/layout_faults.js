/* What breaks a page's layout at its viewport's size, in words: a page wider than the screen,
 * a control out of reach, text squeezed under `minCharacters` of its font's average width.
 * Evaluated by tests/support/layout.py in Chromium. */
((minCharacters) => {
  const root = document.documentElement, width = root.clientWidth, faults = [];
  const shown = (el) => {
    const style = getComputedStyle(el);
    if (style.visibility === "hidden" || style.display === "none") return false;
    const box = el.getBoundingClientRect();
    return box.width > 0 && box.height > 0 && el.getClientRects().length > 0;
  };
  const clipped = (el) => {  // inside a box clipped to a pixel, as visually hidden things are
    for (let up = el; up; up = up.parentElement) {
      const style = getComputedStyle(up);
      if ((style.overflow === "hidden" || style.clip !== "auto") && up.getBoundingClientRect().width <= 2) return true;
    }
    return false;
  };
  const name = (el) => el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") +
    (el.className && typeof el.className === "string" ? "." + el.className.trim().split(/\s+/).join(".") : "") +
    " “" + (el.innerText || el.value || el.getAttribute("aria-label") || "").trim().slice(0, 30) + "”";
  if (root.scrollWidth > width + 1) faults.push(`the page is ${root.scrollWidth} px wide on a ${width} px screen`);
  for (const el of document.querySelectorAll("a[href], button, input, select, textarea, summary")) {
    if (!shown(el) || clipped(el)) continue;
    const box = el.getBoundingClientRect();
    if (box.left < -1 || box.right > width + 1) faults.push(`${name(el)} is outside the screen (${Math.round(box.left)}–${Math.round(box.right)} px)`);
  }
  for (const el of document.querySelectorAll("body *")) {
    const own = Array.from(el.childNodes).filter((n) => n.nodeType === 3).map((n) => n.textContent).join("").trim();
    if (own.length < minCharacters || !shown(el) || el.closest("pre, code, svg") || clipped(el)) continue;
    const size = parseFloat(getComputedStyle(el).fontSize) || 16;
    const box = el.getBoundingClientRect();
    if (box.width < minCharacters * size * 0.5) faults.push(`${name(el)} is ${Math.round(box.width)} px wide`);
  }
  return faults;
})
