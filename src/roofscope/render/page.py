"""What the report's and the comparison's HTML share: the offline page around a body (its
style, the linked-highlight and zoom scripts), and the notebook fragment's style and row of
charts."""

from __future__ import annotations

from roofscope.render.charts.timeline import SCRIPT as TIMELINE_SCRIPT
from roofscope.render.charts.zoom import zoom_script
from roofscope.render.escape import escape_text as _e

PAGE_STYLE = """
body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222;max-width:1800px}
h1{font-size:20px}h2{font-size:16px;margin-top:28px;border-bottom:1px solid #ddd}
svg.chart{display:block;width:100%;height:auto;max-width:1100px}
figure>p{margin:0 0 6px}
table{border-collapse:collapse;font-size:12px;display:block;overflow-x:auto;max-width:100%}
td,th{padding:3px 8px;border-bottom:1px solid #eee;
text-align:right}td:first-child,th:first-child{text-align:left;max-width:520px;
overflow-wrap:normal}.w{white-space:nowrap}.src{text-align:left}ol.sources{font-size:12px;color:#555}
.sel rect,rect.sel{stroke:#000;stroke-width:2}circle.sel{stroke:#000;stroke-width:4}
tr.sel{background:#fff3b0}tr.straggler td:first-child{color:#b00020}.muted{color:#777}
.validity{color:#b00020}
.fail{color:#b00020;font-weight:bold}
.pass{color:#1b7f3b;font-weight:bold}#tip{position:fixed;pointer-events:none;background:#222;
color:#fff;padding:4px 8px;border-radius:4px;font-size:12px;max-width:600px;display:none;
white-space:pre-wrap}[data-k]{cursor:pointer}#timeline{cursor:grab;touch-action:none}
td.name summary{cursor:pointer;overflow-wrap:normal}td.name .full{display:block;font-size:11px;
color:#555}.stack>figure{margin:0 0 16px}
td.n,.n{white-space:nowrap;text-align:right;font-variant-numeric:tabular-nums}
#findings td,#findings th{text-align:left;vertical-align:top}
#findings td.n,#findings th.n{text-align:right}
.nm{display:inline-block;max-width:32em;overflow:hidden;text-overflow:ellipsis;white-space:nowrap;
vertical-align:bottom}td.name .nm{max-width:min(32em,60vw)}
button.copy{border:1px solid #ccc;border-radius:3px;background:#fafafa;cursor:pointer;
color:#555;padding:0 3px;margin-left:4px;font-size:10px;line-height:1.3;vertical-align:1px}
button.copy:hover{color:#000}button.copy.done{color:#1b7f3b}
"""

PAGE_SCRIPT = """
(function(){
  var tip=document.getElementById('tip');
  function select(k){
    document.querySelectorAll('.sel').forEach(function(e){e.classList.remove('sel');});
    document.querySelectorAll('[data-k="'+k+'"]').forEach(function(e){e.classList.add('sel');});
  }
  document.querySelectorAll('[data-k]').forEach(function(el){
    el.addEventListener('click',function(){select(el.getAttribute('data-k'));});
    el.addEventListener('mousemove',function(ev){
      var t=el.querySelector('title');
      tip.textContent=t?t.textContent:(el.getAttribute('data-name')||'');
      tip.style.display='block';tip.style.left=(ev.clientX+12)+'px';tip.style.top=(ev.clientY+12)+'px';
    });
    el.addEventListener('mouseleave',function(){tip.style.display='none';});
  });
  function copied(btn){
    btn.classList.add('done');setTimeout(function(){btn.classList.remove('done');},900);
  }
  function fallback(text,btn){
    var area=document.createElement('textarea');area.value=text;document.body.appendChild(area);
    area.select();try{document.execCommand('copy');copied(btn);}finally{area.remove();}
  }
  document.querySelectorAll('button.copy').forEach(function(btn){
    btn.addEventListener('click',function(ev){
      ev.preventDefault();ev.stopPropagation();
      var text=btn.getAttribute('data-copy')||'';
      if(navigator.clipboard&&window.isSecureContext){
        navigator.clipboard.writeText(text).then(function(){copied(btn);},function(){fallback(text,btn);});
      }else{fallback(text,btn);}
    });
  });
})();
"""


FRAGMENT_STYLE = (
    "<style>.roofscope svg{max-width:100%;height:auto}.roofscope .charts{display:flex;"
    "flex-wrap:wrap;gap:16px;align-items:flex-start}.roofscope .charts>div{flex:1 1 480px;"
    "min-width:0}.roofscope .muted{color:#777}</style>"
)


def page(title: str, body: list[str]) -> str:
    """The one offline HTML file: its policy allows no network, its script inline."""
    return "\n".join(
        [
            "<!DOCTYPE html>",
            '<html lang="en"><head><meta charset="utf-8">',
            '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
            "style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">",
            f"<title>{_e(title)}</title><style>{PAGE_STYLE}</style></head><body>",
            *body,
            '<div id="tip"></div>',
            f"<script>{PAGE_SCRIPT}{zoom_script()}{TIMELINE_SCRIPT}</script>",
            "</body></html>",
        ]
    )


def chart_row(*charts: str) -> str:
    """The charts that have something to show, side by side where the output is wide."""
    inner = "".join(f"<div>{c}</div>" for c in charts if c)
    return f'<div class="charts">{inner}</div>'
