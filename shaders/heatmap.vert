#version 330 core
// One triangle that covers the whole target; the fragment shader does all the work per pixel, so a
// 4096 x 4096 matrix costs the same geometry as a 2 x 2 one. No vertex buffers: positions come from
// gl_VertexID (an empty vertex array object must be bound, as core profile requires).
void main() {
    vec2 p = vec2(float((gl_VertexID << 1) & 2), float(gl_VertexID & 2));  // (0,0) (2,0) (0,2)
    gl_Position = vec4(p * 2.0 - 1.0, 0.0, 1.0);
}
