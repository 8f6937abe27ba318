"""Zoom and pan for the charts of the HTML report: a small inline script that changes an SVG's
viewBox, so the report stays one offline file and the SVG files stay as drawn."""

ZOOM = """
(function(){
  document.querySelectorAll('svg#roofline, svg#movement').forEach(function(svg){
    var b=svg.viewBox.baseVal, base=[b.x,b.y,b.width,b.height], vb=base.slice(), drag=null;
    function show(){
      svg.setAttribute('viewBox',vb.map(function(v){return v.toFixed(2);}).join(' '));
    }
    function clamp(){
      vb[0]=Math.max(base[0],Math.min(vb[0],base[0]+base[2]-vb[2]));
      vb[1]=Math.max(base[1],Math.min(vb[1],base[1]+base[3]-vb[3]));
    }
    svg.addEventListener('wheel',function(ev){
      if(!(ev.ctrlKey||ev.metaKey))return;
      ev.preventDefault();
      var r=svg.getBoundingClientRect(), f=ev.deltaY<0?0.8:1.25;
      var px=vb[0]+(ev.clientX-r.left)/r.width*vb[2], py=vb[1]+(ev.clientY-r.top)/r.height*vb[3];
      var w=Math.min(base[2],vb[2]*f), h=Math.min(base[3],vb[3]*f);
      vb=[px-(px-vb[0])*w/vb[2],py-(py-vb[1])*h/vb[3],w,h];clamp();show();
    },{passive:false});
    svg.addEventListener('pointerdown',function(ev){
      drag={x:ev.clientX,y:ev.clientY,from:vb.slice(),moved:false};
    });
    window.addEventListener('pointermove',function(ev){
      if(!drag)return;
      var r=svg.getBoundingClientRect(), dx=ev.clientX-drag.x, dy=ev.clientY-drag.y;
      if(!drag.moved&&Math.abs(dx)+Math.abs(dy)<4)return;
      drag.moved=true;
      vb[0]=drag.from[0]-dx/r.width*vb[2];vb[1]=drag.from[1]-dy/r.height*vb[3];clamp();show();
    });
    window.addEventListener('pointerup',function(){drag=null;});
    svg.addEventListener('dblclick',function(){vb=base.slice();show();});
    var hint=document.createElement('p');
    hint.className='muted zoom-hint';
    hint.textContent='Ctrl (or \u2318) + wheel zooms this chart, dragging pans it, '
      +'a double-click resets it.';
    svg.parentNode.insertBefore(hint,svg.nextSibling);
  });
})();
"""


def zoom_script() -> str:
    """Zoom (Ctrl + wheel, about the pointer) and pan (drag) of the roofline and movement
    charts, on their SVG viewBox: the page stays one offline file, the SVG files unchanged."""
    return ZOOM
